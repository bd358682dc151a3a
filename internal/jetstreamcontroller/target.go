package jetstreamcontroller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// Reasons a JetStream resource waits or fails on its target.
const (
	reasonClusterNotFound  = "ClusterNotFound"
	reasonClusterNotReady  = "ClusterNotReady"
	reasonNotAllowed       = "NotAllowed"
	reasonSecretNotFound   = "SecretNotFound"
	reasonConnectionFailed = "ConnectionFailed"
)

// targetProblem is why a target cannot be used now. gone is true when it
// will not come back by itself (deleted), which releases a finalizer.
type targetProblem struct {
	reason, message string
	gone            bool
}

// resolveTarget turns a resource's target into what dialing needs.
func (r *Base) resolveTarget(ctx context.Context, obj v1alpha1.JetStreamObject) (jetstream.ConnSpec, *targetProblem, error) {
	t := obj.GetTarget()
	if t.Cluster != nil && t.Account != "" {
		return r.accountConn(ctx, obj.GetNamespace(), *t.Cluster, t.Account)
	}
	if t.Cluster != nil {
		return r.clusterConn(ctx, obj.GetNamespace(), *t.Cluster)
	}
	if t.Connection != nil {
		return r.externalConn(ctx, obj.GetNamespace(), *t.Connection)
	}
	return jetstream.ConnSpec{}, &targetProblem{reason: reasonClusterNotFound, message: "no target: set cluster or connection"}, nil
}

// clusterConn dials a NatsCluster kubenats runs, with the credentials in its
// client Secret.
func (r *Base) clusterConn(ctx context.Context, ns string, ref v1alpha1.ClusterRef) (jetstream.ConnSpec, *targetProblem, error) {
	if ref.Namespace == "" {
		ref.Namespace = ns
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, ref.Namespace) {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, gone: true, message: fmt.Sprintf(
			"the operator does not watch namespace %q, where NatsCluster %s lives", ref.Namespace, ref.Name)}, nil
	}
	var c v1alpha1.NatsCluster
	found := &c
	err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &c)
	switch {
	case apierrors.IsNotFound(err):
		found = nil
	case err != nil:
		return jetstream.ConnSpec{}, nil, err
	case !c.DeletionTimestamp.IsZero():
		found = nil
	}
	if problem := clusterRefProblem(ns, ref, found); problem != nil {
		return jetstream.ConnSpec{}, problem, nil
	}
	if c.HasTrust() {
		// There is no cluster-wide user in mode jwt: a JetStream resource
		// names the account it lives in (accountConn). Refused rather than
		// run with the system account's rights.
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, message: fmt.Sprintf(
			"NatsCluster %s/%s runs auth mode jwt: name the NatsAccount the object lives in (spec.account)", ref.Namespace, ref.Name)}, nil
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionAvailable) || c.Status.CredentialsSecretRef == nil {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonClusterNotReady, message: fmt.Sprintf(
			"NatsCluster %s/%s is not available yet", ref.Namespace, ref.Name)}, nil
	}
	var s corev1.Secret
	key := client.ObjectKey{Namespace: ref.Namespace, Name: c.Status.CredentialsSecretRef.Name}
	if err := r.Get(ctx, key, &s); err != nil {
		return jetstream.ConnSpec{}, nil, err
	}
	spec := jetstream.ConnSpec{
		System:   "natscluster/" + ref.Namespace + "/" + ref.Name,
		Servers:  []string{c.Status.Endpoint.Internal},
		Pinned:   ref.Namespace + "/" + ref.Name,
		Domain:   c.Spec.JetStream.Domain,
		User:     string(s.Data[render.CredentialsUserKey]),
		Password: string(s.Data[render.CredentialsPasswordKey]),
		Token:    string(s.Data[render.CredentialsTokenKey]),
		// With client TLS the server is verified against its CA.
		CA: s.Data[render.TLSCAKey],
	}
	if problem := r.clientTLS(ctx, &c, &spec, false); problem != nil {
		return jetstream.ConnSpec{}, problem, nil
	}
	return spec, nil, nil
}

// clientTLS fills in spec the client TLS of c: handshake first, and with
// verify the servers' own certificate, which carries client auth (the
// operator presents it, needing no certificate of its own); withCA also
// the CA, which a mode users connection reads from the credentials Secret
// instead.
func (r *Base) clientTLS(ctx context.Context, c *v1alpha1.NatsCluster, spec *jetstream.ConnSpec, withCA bool) *targetProblem {
	ct := c.Spec.ClientTLS()
	spec.TLSHandshakeFirst = ct.HandshakeFirst
	if !ct.Verify && !withCA {
		return nil
	}
	data, err := r.Servers.ClientCertificate(ctx, c)
	if err != nil || data == nil {
		return &targetProblem{reason: reasonClusterNotReady, message: fmt.Sprintf(
			"NatsCluster %s/%s: its client certificate cannot be read yet", c.Namespace, c.Name)}
	}
	if withCA {
		spec.CA = data[render.TLSCAKey]
	}
	if ct.Verify {
		spec.Cert, spec.PrivateKey = data[render.TLSCertKey], data[render.TLSKeyKey]
	}
	return nil
}

// clusterRefProblem is why a resource in ns may not use the NatsCluster
// ref names, found as c (nil: it does not exist, or is being deleted), or
// nil when it may.
//
// Across namespaces the permission comes first, and reads the same whether
// the cluster exists or not: a tenant must not learn, by naming clusters
// in namespaces it cannot read, which exist. Within its own namespace the
// tenant can see for itself, and is told plainly.
//
// Both are gone for a deletion: only the cluster's owner can make it, or
// list the namespace, again, and a finalizer must not wait for that.
func clusterRefProblem(ns string, ref v1alpha1.ClusterRef, c *v1alpha1.NatsCluster) *targetProblem {
	if ref.Namespace != ns && (c == nil || !c.Spec.JetStream.AdmitsNamespace(ns)) {
		return &targetProblem{reason: reasonNotAllowed, gone: true, message: fmt.Sprintf(
			"NatsCluster %s/%s does not exist or does not list namespace %q in spec.jetstream.allowedNamespaces", ref.Namespace, ref.Name, ns)}
	}
	if c == nil {
		return &targetProblem{reason: reasonClusterNotFound, gone: true,
			message: fmt.Sprintf("NatsCluster %s/%s does not exist", ref.Namespace, ref.Name)}
	}
	return nil
}

// connectionAllowed reports whether resources of namespace ns may use
// spec.connection: any namespace when the operator lists none.
func connectionAllowed(allowed []string, ns string) bool {
	return len(allowed) == 0 || slices.Contains(allowed, ns)
}

// externalConn dials a NATS system by address, with credentials from the
// user's Secrets: only those their owners opted in.
func (r *Base) externalConn(ctx context.Context, ns string, conn v1alpha1.Connection) (jetstream.ConnSpec, *targetProblem, error) {
	spec := jetstream.ConnSpec{System: "connection/" + ns, Servers: conn.Servers, Domain: conn.JSDomain, External: true, Namespace: ns}
	if !connectionAllowed(r.ConnectionNamespaces, ns) {
		// Gone for a deletion: nothing was ever dialled from here.
		return spec, &targetProblem{reason: reasonNotAllowed, gone: true, message: fmt.Sprintf(
			"the operator does not let namespace %q use spec.connection (--connection-allowed-namespaces): name a NatsCluster instead", ns)}, nil
	}
	if ref := conn.CredentialsSecretRef; ref != nil {
		data, problem, err := r.secretData(ctx, ns, ref.Name, "spec.connection.credentialsSecretRef")
		if problem != nil || err != nil {
			return spec, problem, err
		}
		spec.Creds, spec.NKeySeed = data["creds"], data["nkey"]
		spec.Token = string(data["token"])
		spec.User, spec.Password = string(data["user"]), string(data["password"])
	}
	if ref := conn.TLSSecretRef; ref != nil {
		data, problem, err := r.secretData(ctx, ns, ref.Name, "spec.connection.tlsSecretRef")
		if problem != nil || err != nil {
			return spec, problem, err
		}
		spec.CA, spec.Cert, spec.PrivateKey = data["ca.crt"], data["tls.crt"], data["tls.key"]
	}
	return spec, nil, nil
}

// secretData is what an opted-in user Secret holds. A Secret that cannot be
// used counts as gone: without its owner's consent the target cannot be
// reached, and a deleted resource is let go.
func (r *Base) secretData(ctx context.Context, ns, name, field string) (map[string][]byte, *targetProblem, error) {
	s, refusal, err := usersecrets.Get(ctx, r.UserSecrets, ns, name, field)
	if refusal != "" {
		return nil, &targetProblem{reason: reasonSecretNotFound, gone: true, message: refusal}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return s.Data, nil, nil
}
