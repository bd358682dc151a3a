package render

import (
	"strconv"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Child names derive from the NatsCluster's name, so that several clusters
// live side by side in one namespace.

// ClientServiceName is the client Service, also the internal endpoint's host.
func ClientServiceName(c *v1alpha1.NatsCluster) string { return c.Name }

// HeadlessServiceName is the Service that gives each server a stable DNS name.
func HeadlessServiceName(c *v1alpha1.NatsCluster) string { return c.Name + "-headless" }

// ConfigMapName holds nats.conf.
func ConfigMapName(c *v1alpha1.NatsCluster) string { return c.Name + "-config" }

// StatefulSetName runs the servers; pods are <name>-0, <name>-1, ...
func StatefulSetName(c *v1alpha1.NatsCluster) string { return c.Name }

// PodDisruptionBudgetName keeps all but one server up through voluntary
// disruptions.
func PodDisruptionBudgetName(c *v1alpha1.NatsCluster) string { return c.Name }

// AuthSecretName holds the generated client password or token.
func AuthSecretName(c *v1alpha1.NatsCluster) string { return c.Name + "-auth" }

// SystemSecretName holds the password of the operator's own system user.
func SystemSecretName(c *v1alpha1.NatsCluster) string { return c.Name + "-system" }

// WebSocketIngressName is the Ingress in front of the WebSocket port.
func WebSocketIngressName(c *v1alpha1.NatsCluster) string { return c.Name + "-websocket" }

// CredentialsSecretName holds a ready-to-use client URL and its parts.
func CredentialsSecretName(c *v1alpha1.NatsCluster) string { return c.Name + "-client" }

// DataVolumeName is the volume claim template's name (but see DataVolume);
// claims are data-<name>-<ordinal>.
const DataVolumeName = "data"

// ClaimName is the claim of the server with the given ordinal.
func ClaimName(c *v1alpha1.NatsCluster, ordinal int) string {
	return DataVolume(c) + "-" + PodName(c, ordinal)
}

// PodName is the pod of the server with the given ordinal.
func PodName(c *v1alpha1.NatsCluster, ordinal int) string {
	return StatefulSetName(c) + "-" + itoa(ordinal)
}

// PodOrdinal is the ordinal of one of the cluster's pods (or servers, which
// are named after them) by its name.
func PodOrdinal(c *v1alpha1.NatsCluster, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, StatefulSetName(c)+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || itoa(n) != rest {
		return 0, false
	}
	return n, true
}
