package controller

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
)

// ErrNoServers: the cluster has no running server to reach yet.
var ErrNoServers = errors.New("no server of the cluster is ready")

// SystemConn connects as the operator's system user to c's ready servers,
// for the account controller's pushes and reads: the same connection, TLS
// and pinned dial as the cluster's own reloads. ready are the ready
// servers' names (their pods'), under which each answers a system request
// for itself.
func (r *NatsClusterReconciler) SystemConn(ctx context.Context, c *v1alpha1.NatsCluster) (_ *nats.Conn, ready []string, _ error) {
	return r.connReady(ctx, c, nil, "kubenats-system")
}

// AccountConn connects to c's ready servers with a creds file (the
// operator's own user in an account), with the same TLS and pinned dial.
func (r *NatsClusterReconciler) AccountConn(ctx context.Context, c *v1alpha1.NatsCluster, creds []byte) (*nats.Conn, error) {
	nc, _, err := r.connReady(ctx, c, creds, "kubenats")
	return nc, err
}

// connReady connects to c's ready servers as the system user, or with
// creds when given. What the account controller reads on these
// connections is small (accounts.MaxMessage): a larger message closes the
// connection before nats.go allocates it.
func (r *NatsClusterReconciler) connReady(ctx context.Context, c *v1alpha1.NatsCluster, creds []byte, name string) (_ *nats.Conn, ready []string, _ error) {
	var sts appsv1.StatefulSet
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: render.StatefulSetName(c)}, &sts); {
	case apierrors.IsNotFound(err):
		return nil, nil, ErrNoServers
	case err != nil:
		return nil, nil, err
	case !metav1.IsControlledBy(&sts, c):
		return nil, nil, ErrNoServers
	}
	pods, err := r.serverPods(ctx, c, &sts)
	if err != nil {
		return nil, nil, err
	}
	pods = readyPods(pods)
	if len(pods) == 0 {
		return nil, nil, ErrNoServers
	}
	a, err := r.access(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	as := a.credentials()
	if creds != nil {
		if as, err = jetstream.CredsOption(creds); err != nil {
			return nil, nil, err
		}
	}
	nc, err := a.connectAs(pods, as, name, accounts.MaxMessage)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	return nc, names, nil
}

// readyPods are the pods that run, have an address and are Ready.
func readyPods(pods []corev1.Pod) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(pods))
	for i := range pods {
		if pods[i].Status.PodIP != "" && pods[i].DeletionTimestamp.IsZero() && podReady(&pods[i]) {
			out = append(out, pods[i])
		}
	}
	return out
}

// ClientCA is the CA of c's client certificates, read as the cluster's own pass reads it: from the cache, or from a
// Secret its owner opted in, never from any other.
func (r *NatsClusterReconciler) ClientCA(ctx context.Context, c *v1alpha1.NatsCluster) ([]byte, error) {
	data, refusal, err := certificateSecretData(ctx, r.Client, r.UserSecrets, c, "client")
	switch {
	case err != nil:
		return nil, err
	case refusal != "":
		return nil, errors.New(refusal)
	}
	return data[render.TLSCAKey], nil
}
