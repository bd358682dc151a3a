package servers

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

// Reach reaches NatsClusters' servers for every controller: the
// credentials, TLS and pinned dial the operator's own connections use.
type Reach struct {
	// Client reads the cache: StatefulSets, pods, and the Secrets the
	// operator made.
	Client client.Reader
	// APIReader reads past the cache: a generated Secret the cache has not
	// seen yet (LookupSecret).
	APIReader client.Reader
	// UserSecrets holds the Secrets their owners opted in for kubenats
	// (SecretAllowLabel), the only user Secrets the operator reads.
	UserSecrets client.Reader
	// Dialer dials the servers for the operator's own connections (system
	// account, monitor port); nil: a plain TCP dial. An operator inside
	// Istio's mesh needs nothing else: its sidecar captures the dial. The
	// e2e suite sets the mesh model's client here.
	Dialer nats.CustomDialer
}

// ErrNoServers: the cluster has no running server to reach yet.
var ErrNoServers = errors.New("no server of the cluster is ready")

// SystemConn connects as the operator's system user to c's ready servers,
// for the account controller's pushes and reads: the same connection, TLS
// and pinned dial as the cluster's own reloads. ready are the ready
// servers' names (their pods'), under which each answers a system request
// for itself.
func (r *Reach) SystemConn(ctx context.Context, c *v1alpha1.NatsCluster) (_ *nats.Conn, ready []string, _ error) {
	return r.connReady(ctx, c, nil, "kubenats-system")
}

// AccountConn connects to c's ready servers with a creds file (the
// operator's own user in an account), with the same TLS and pinned dial.
func (r *Reach) AccountConn(ctx context.Context, c *v1alpha1.NatsCluster, creds []byte) (*nats.Conn, error) {
	nc, _, err := r.connReady(ctx, c, creds, "kubenats")
	return nc, err
}

// connReady connects to c's ready servers as the system user, or with
// creds when given. What the account controller reads on these
// connections is small (accounts.MaxMessage): a larger message closes the
// connection before nats.go allocates it.
func (r *Reach) connReady(ctx context.Context, c *v1alpha1.NatsCluster, creds []byte, name string) (_ *nats.Conn, ready []string, _ error) {
	var sts appsv1.StatefulSet
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts); {
	case apierrors.IsNotFound(err):
		return nil, nil, ErrNoServers
	case err != nil:
		return nil, nil, err
	case !metav1.IsControlledBy(&sts, c):
		return nil, nil, ErrNoServers
	}
	pods, err := ServerPods(ctx, r.Client, c, &sts)
	if err != nil {
		return nil, nil, err
	}
	pods = ReadyPods(pods)
	if len(pods) == 0 {
		return nil, nil, ErrNoServers
	}
	a, err := r.Access(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	as := a.Credentials()
	if creds != nil {
		if as, err = jetstream.CredsOption(creds); err != nil {
			return nil, nil, err
		}
	}
	nc, err := a.ConnectAs(pods, as, name, accounts.MaxMessage)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	return nc, names, nil
}

// ReadyPods are the pods that run, have an address and are Ready.
func ReadyPods(pods []corev1.Pod) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(pods))
	for i := range pods {
		if pods[i].Status.PodIP != "" && pods[i].DeletionTimestamp.IsZero() && PodReady(&pods[i]) {
			out = append(out, pods[i])
		}
	}
	return out
}

// ClientCA is the CA of c's client certificates, read as the cluster's own pass reads it: from the cache, or from a
// Secret its owner opted in, never from any other.
func (r *Reach) ClientCA(ctx context.Context, c *v1alpha1.NatsCluster) ([]byte, error) {
	data, refusal, err := CertificateSecretData(ctx, r.Client, r.UserSecrets, c, "client")
	switch {
	case err != nil:
		return nil, err
	case refusal != "":
		return nil, errors.New(refusal)
	}
	return data[render.TLSCAKey], nil
}

// Access reads what the operator needs to reach c's servers.
func (r *Reach) Access(ctx context.Context, c *v1alpha1.NatsCluster) (Access, error) {
	a := Access{Cluster: c, MonitorTLS: c.Spec.MonitorTLSEnabled(), Dial: r.Dialer}
	switch {
	case c.HasTrust():
		jwt, seed, err := r.systemUserJWT(ctx, c)
		if err != nil {
			return a, err
		}
		a.UserJWT, a.Seed = jwt, seed
	case c.HasSystemUser():
		password, err := r.systemPassword(ctx, c)
		if err != nil {
			return a, err
		}
		a.Password = password
	}
	data, err := r.tlsSecretData(ctx, c, "client")
	if err != nil {
		return a, err
	}
	if a.TLS, err = clientTLSConfig(data, c.Spec.ClientTLS().Verify); err != nil {
		return a, err
	}
	return a, nil
}

// ClientCertificate is the data of c's client certificate Secret, read as
// the cluster's own pass reads it; nil while it cannot be read (missing,
// or not one kubenats may use).
func (r *Reach) ClientCertificate(ctx context.Context, c *v1alpha1.NatsCluster) (map[string][]byte, error) {
	return r.tlsSecretData(ctx, c, "client")
}

// tlsSecretData is the data of the certificate Secret of c's listener.
func (r *Reach) tlsSecretData(ctx context.Context, c *v1alpha1.NatsCluster, listener string) (map[string][]byte, error) {
	data, _, err := CertificateSecretData(ctx, r.Client, r.UserSecrets, c, listener)
	return data, err
}

// systemPassword is the operator's own system user password, from the
// Secret it generated (cached: it carries kubenats' label).
func (r *Reach) systemPassword(ctx context.Context, c *v1alpha1.NatsCluster) (string, error) {
	var s corev1.Secret
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.SystemSecretName()}, &s); err != nil {
		return "", err
	}
	return string(s.Data[render.PasswordKey]), nil
}

// systemUserJWT is the operator's system user in mode jwt.
func (r *Reach) systemUserJWT(ctx context.Context, c *v1alpha1.NatsCluster) (jwt, seed string, _ error) {
	s, err := ownedSecret(ctx, r.APIReader, c, c.TrustSecretName())
	if err != nil {
		return "", "", err
	}
	if s == nil {
		return "", "", ErrTrustMissing
	}
	return string(s.Data[accounts.SystemUserJWTKey]), string(s.Data[accounts.SystemUserSeedKey]), nil
}

var ErrTrustMissing = errors.New("the trust Secret is missing")
