package natscluster

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// settleClientPlaintext fills in spec.tls.client.allowPlaintext, when the
// spec leaves it unset, with what plan.ClientPlaintext decides from the
// StatefulSet's pod template: the rest of the pass (render included)
// reads only c.Spec.AcceptsPlaintextClients. c is the pass's defaulted
// copy, never written back.
func (r *Reconciler) settleClientPlaintext(ctx context.Context, c *v1alpha1.NatsCluster) error {
	ct := c.Spec.ClientTLS()
	if ct.AllowPlaintext != nil {
		return nil
	}
	var sts appsv1.StatefulSet
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	served := plan.ClientTLSServed{}
	if err == nil && metav1.IsControlledBy(&sts, c) {
		served = servers.ClientTLSServed(sts.Spec.Template.Annotations, sts.Spec.Template.Spec.Volumes)
	}
	ct.AllowPlaintext = ptr.To(plan.ClientPlaintext(nil, served))
	c.Spec.TLS.Client = &ct
	return nil
}

// clientPKI returns the client CA the operator keeps for c and the
// certificate it signs for the client port (NatsCluster.ClientDNSNames), made
// or renewed as pki.Due says, and when to look again. A renewed
// certificate reaches the servers through their Secret volume and a
// reload. A CA deleted under running servers is not made anew without the
// user's word (missingGenerated): clients trust it.
//
// A replaced client CA has no overlap: clients that read ca.crt before
// trust the old CA alone until they read it again. It is replaced only
// when it is gone (with the user's word), unreadable, or within a
// certificate's lifetime of its ten years.
func (r *Reconciler) clientPKI(ctx context.Context, c *v1alpha1.NatsCluster, read map[string]*corev1.Secret) (*render.ClientPKI, time.Duration, *status.Blocker, error) {
	ca, blocker, err := r.keptCA(ctx, c, c.ClientCASecretName(), read, nil)
	if err != nil || blocker != nil {
		return nil, 0, blocker, err
	}
	cert, err := r.ownedKeyPair(ctx, c, c.ClientTLSSecretName(), read)
	if err != nil {
		return nil, 0, nil, err
	}
	now := time.Now()
	names := c.ClientDNSNames(r.clusterDomain())
	decision := pki.Due(cert, ca, names, now, r.RouteCertRenewBefore)
	if decision.Action == pki.ReplaceCA {
		if ca, err = pki.NewCA(c.Namespace+"/"+c.Name+" client CA", now, pki.CAValidity); err != nil {
			return nil, 0, nil, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CertificateIssued", "IssueClientCA", "made a new client CA: %s", decision.Why)
	}
	if decision.Action != pki.Keep {
		if cert, err = pki.Issue(ca, names, now, pki.CertValidity); err != nil {
			return nil, 0, nil, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CertificateIssued", "IssueClientCertificate", "issued the client certificate: %s", decision.Why)
	}
	var next time.Duration
	if at, ok := pki.RenewAt(cert.Cert, r.RouteCertRenewBefore); ok {
		next = max(time.Until(at), time.Second)
	}
	return &render.ClientPKI{CA: ca, Cert: cert}, next, nil, nil
}
