package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
)

// The servers' pods, their claims and the names they answer to. Every name
// derives from the NatsCluster's name, so that several clusters live side
// by side in one namespace.

// Names of the volume claim template: claims are <template>-<pod>.
const (
	// DataVolumeName is kubenats' own template (but see DataVolume).
	DataVolumeName = "data"
	// ChartDataVolume is the official chart's, kept by a takeover:
	// claims nats-js-<pod>.
	ChartDataVolume = "nats-js"
)

// DataVolume is the volume claim template's name: the chart's while a
// release is taken over (its claims and data stay), kubenats' otherwise.
func (c *NatsCluster) DataVolume() string {
	if c.Spec.TakingOver() {
		return ChartDataVolume
	}
	return DataVolumeName
}

// PodName is the pod of the server with the given ordinal.
func (c *NatsCluster) PodName(ordinal int) string {
	return c.StatefulSetName() + "-" + strconv.Itoa(ordinal)
}

// ClaimName is the claim of the server with the given ordinal.
func (c *NatsCluster) ClaimName(ordinal int) string {
	return c.DataVolume() + "-" + c.PodName(ordinal)
}

// PodOrdinal is the ordinal of one of the cluster's pods (or servers, which
// are named after them) by its name; false for any other name, also for a
// namesake's pod with a longer prefix or a padded number.
func (c *NatsCluster) PodOrdinal(pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, c.StatefulSetName()+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// PodDNSName is the name the operator verifies a server's certificate
// against when it dials that server's address.
func (c *NatsCluster) PodDNSName(pod string) string {
	return fmt.Sprintf("%s.%s.%s.svc", pod, c.HeadlessServiceName(), c.Namespace)
}

// InternalHost is the client Service's in-cluster DNS name.
func (c *NatsCluster) InternalHost() string {
	return fmt.Sprintf("%s.%s.svc", c.ClientServiceName(), c.Namespace)
}

// RouteDNSNames are the names a route certificate must carry: every form
// under which one server dials another (routes use <pod>.<headless>), as
// wildcards, so that scaling needs no new certificate. No IP addresses:
// pods get new ones, and routes dial names (cluster.advertise).
func (c *NatsCluster) RouteDNSNames(clusterDomain string) []string {
	return podWildcards(c.HeadlessServiceName(), c.Namespace, clusterDomain)
}

// GatewayDNSNames are the names the gateway certificate carries: every
// server by the names members dial and gossip.
func (c *NatsCluster) GatewayDNSNames(clusterDomain string) []string {
	return podWildcards(c.HeadlessServiceName(), c.Namespace, clusterDomain)
}

// ClientDNSNames are the names clients use: the client Service in every
// form, and each server through the headless Service (the operator connects
// to servers one by one). Not localhost: nothing in the pod dials the client
// port, and a certificate for localhost from an issuer other namespaces
// share (a ClusterIssuer) would let whoever holds it answer as any local
// service that trusts that issuer.
func (c *NatsCluster) ClientDNSNames(clusterDomain string) []string {
	svc, ns := c.ClientServiceName(), c.Namespace
	names := []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc." + clusterDomain}
	return append(names, podWildcards(c.HeadlessServiceName(), ns, clusterDomain)...)
}

func podWildcards(headless, ns, clusterDomain string) []string {
	base := []string{headless, headless + "." + ns, headless + "." + ns + ".svc", headless + "." + ns + ".svc." + clusterDomain}
	out := make([]string, len(base))
	for i, b := range base {
		out[i] = "*." + b
	}
	return out
}

// ServerImage is the nats image of c: spec.image, or the official image at
// spec.version.
func (c *NatsCluster) ServerImage() string {
	if c.Spec.Image != "" {
		return c.Spec.Image
	}
	return "nats:" + c.Spec.Version + "-alpine"
}
