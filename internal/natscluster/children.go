package natscluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// Reasons only this controller reports.
const (
	reasonConfigInvalid    = "ConfigInvalid"
	reasonScaleDownRefused = "ScaleDownRefused"
	// reasonScalingDown: servers are being emptied and removed, then their
	// JetStream peers. Ready waits for the last step, and the reason brings
	// the next pass back to it even once the StatefulSet has shrunk.
	reasonScalingDown = "ScalingDown"
	// reasonScalingUp: new servers run but have not all joined the
	// JetStream meta group yet.
	reasonScalingUp = "ScalingUp"
)

// refusedRetry is how often a refused scale-down looks again: the stream
// whose replicas the user has yet to lower raises no Kubernetes event.
const refusedRetry = 30 * time.Second

// passAttempts bounds how often one pass starts over after a Secret it
// read changed before its write (reconcileChildren).
const passAttempts = 3

// reconcileChildren renders c's objects and applies them. A blocker is what
// the user should know; an error is retried with backoff.
//
// want are the marks the servers report once they loaded the files applied
// here (reloadConfig), nil when the pass stopped short.
//
// A Secret whose content this pass derived from what it read (a
// certificate, a generated value) is written only over what was read: one
// changed meanwhile, by anyone, fails the write with a conflict, and the
// pass is made again from a fresh read, at most passAttempts times. A
// careless write would put back a renewal computed from the old content.
func (r *Reconciler) reconcileChildren(ctx context.Context, c *v1alpha1.NatsCluster, obs *status.ClusterObservation, mesh *render.MeshStage) (_ ctrl.Result, _ *status.Blocker, want plan.Marks, _ error) {
	result, blocker, want, err := r.applyChildren(ctx, c, obs, mesh)
	for attempt := 1; attempt < passAttempts && apierrors.IsConflict(err); attempt++ {
		result, blocker, want, err = r.applyChildren(ctx, c, obs, mesh)
	}
	if blocker != nil || err != nil {
		want = nil
	}
	return result, blocker, want, err
}

func (r *Reconciler) applyChildren(ctx context.Context, c *v1alpha1.NatsCluster, obs *status.ClusterObservation, mesh *render.MeshStage) (ctrl.Result, *status.Blocker, plan.Marks, error) {
	// An image the operator does not allow gets nothing: no Secret is
	// read for it, no pod runs it.
	if blocker := r.Images.refusal(c); blocker != nil {
		return ctrl.Result{}, blocker, nil, nil
	}
	if blocker, err := r.adoptChartRelease(ctx, c); err != nil || blocker != nil {
		return ctrl.Result{RequeueAfter: retryAfter(blocker)}, blocker, nil, err
	}
	// Nor does a Certificate go to a ClusterIssuer the operator keeps
	// from tenants.
	if blocker := r.Issuers.refusal(c); blocker != nil {
		return ctrl.Result{}, blocker, nil, nil
	}
	// Nor is anything published through an Ingress the platform does not
	// allow, or one serving a Secret its owner did not opt in.
	if blocker := r.Ingresses.refusal(c); blocker != nil {
		return ctrl.Result{}, blocker, nil, nil
	}
	if blocker, err := ingressSecretRefusal(ctx, r.UserSecrets, c); err != nil || blocker != nil {
		return ctrl.Result{}, blocker, nil, err
	}
	read := map[string]*corev1.Secret{}
	cred, credHash, blocker, err := r.credentials(ctx, c, read)
	if err != nil || blocker != nil {
		return ctrl.Result{RequeueAfter: retryAfter(blocker)}, blocker, nil, err
	}
	r.reportIgnoredRouteIssuer(c)
	var renewIn time.Duration
	switch {
	case !c.HasRoutes():
	case c.GeneratesRoutePKI():
		if cred.RoutePKI, renewIn, blocker, err = r.routePKI(ctx, c, read); err != nil || blocker != nil {
			return ctrl.Result{}, blocker, nil, err
		}
	}
	if c.Spec.GeneratesClientPKI() {
		var clientRenewIn time.Duration
		if cred.ClientPKI, clientRenewIn, blocker, err = r.clientPKI(ctx, c, read); err != nil || blocker != nil {
			return ctrl.Result{}, blocker, nil, err
		}
		renewIn = soonest(renewIn, clientRenewIn)
	}
	if obs.Certificates, cred.ClientCA, err = r.observeCertificates(ctx, c, cred); err != nil {
		return ctrl.Result{}, nil, nil, err
	}
	if blocker := refusedMount(obs.Certificates); blocker != nil {
		return ctrl.Result{}, blocker, nil, nil
	}
	if !c.HasSystemUser() {
		// Nothing can reload these servers: a renewed certificate reaches
		// them by a restart.
		credHash = withCertificates(credHash, obs.Certificates)
	}
	zones, err := r.placeZones(ctx, c)
	if err != nil {
		return ctrl.Result{}, nil, nil, err
	}
	obs.NodeZones = zones.nodeZones
	in := render.Inputs{CredentialsHash: credHash, ClusterDomain: r.clusterDomain(),
		Mesh: mesh, NativeSidecars: r.NativeSidecars, ExporterImage: r.ExporterImage,
		NoPrometheusOperator: !r.prometheusOperator(), Trust: cred.Trust, OperatorNamespace: r.OperatorNamespace,
		SpreadZones: zones.spread}
	objs, err := render.Objects(c, in)
	if err != nil {
		return ctrl.Result{}, &status.Blocker{Reason: reasonConfigInvalid, Message: err.Error(), Fatal: true}, nil, nil
	}
	sts := findStatefulSet(objs)
	if sts != nil {
		obs.Template = sts.Spec.Template.Annotations
	}
	hold, blocker, err := r.guardStatefulSet(ctx, c, sts, &obs.Silent)
	if err != nil {
		return ctrl.Result{}, nil, nil, err
	}
	if hold {
		objs = slices.DeleteFunc(objs, isStatefulSet)
	}
	// A generated Secret read this pass as it should be is not applied
	// again: an apply creates what is missing, and one deleted since the
	// read must be reported by the next pass (missingGenerated), not made
	// again from the value read.
	secrets := slices.DeleteFunc(render.Secrets(c, cred), func(s *corev1.Secret) bool { return upToDate(read[s.Name], s) })
	for _, s := range secrets {
		if live := read[s.Name]; live != nil {
			s.ResourceVersion = live.ResourceVersion
		}
	}
	for _, obj := range append(asObjects(secrets), objs...) {
		if err := r.Applier.Apply(ctx, c, obj); err != nil {
			if b := certManagerMissing(err); b != nil {
				return ctrl.Result{}, b, nil, nil
			}
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, nil, nil, err
			}
			if conflict := (*apply.ConflictError)(nil); errors.As(err, &conflict) {
				return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonNameConflict, Message: err.Error(), Fatal: true}, nil, nil
			}
			return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil, err
		}
	}
	if err := r.pruneOptional(ctx, c, objs); err != nil {
		return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil, err
	}
	return ctrl.Result{RequeueAfter: soonest(retryAfter(blocker), renewIn)}, blocker, r.wantedMarks(c, cred, in, obs.Certificates), nil
}

// wantedMarks are the marks of the files just applied.
func (r *Reconciler) wantedMarks(c *v1alpha1.NatsCluster, cred render.Credentials, in render.Inputs, certs []status.Certificate) plan.Marks {
	conf, err := render.ConfWith(c, in)
	if err != nil {
		return nil
	}
	usersRevision := ""
	if c.HasUsersFile() {
		_, usersRevision, _ = render.UsersConf(c, cred)
	}
	m := wantedMarks(conf.Revision, usersRevision, certs)
	if mark := render.OperatorKeysMark(cred.Trust); mark != "" {
		m[render.MetadataOperatorKeysKey] = mark
	}
	if c.HasLeafnodesFile() {
		if _, revision, err := render.LeafnodesFiles(c, cred.Topology.Remotes); err == nil {
			m[render.MetadataLeafnodesKey] = revision
		}
	}
	return m
}

// withCertificates folds the expiry of each certificate into a hash.
func withCertificates(hash string, certs []status.Certificate) string {
	sum := sha256.New()
	sum.Write([]byte(hash))
	for _, cert := range certs {
		fmt.Fprintf(sum, "\x00%s=%d", cert.Listener, cert.NotAfter.Unix())
	}
	return hex.EncodeToString(sum.Sum(nil)[:8])
}

// upToDate reports whether live (nil: not read) already holds desired's
// data and labels.
func upToDate(live, desired *corev1.Secret) bool {
	if live == nil || len(live.Data) != len(desired.StringData) {
		return false
	}
	for k, v := range desired.StringData {
		if string(live.Data[k]) != v {
			return false
		}
	}
	for k, v := range desired.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	return true
}

// soonest is the shorter of two requeue delays, zero meaning none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

func asObjects[T client.Object](in []T) []client.Object {
	out := make([]client.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}

// retryAfter is when a pass that stopped short looks again, for what raises
// no Kubernetes event: replicas moving inside NATS, a stream the user has
// yet to shrink. A user Secret needs no retry: its changes are watched.
func retryAfter(b *status.Blocker) time.Duration {
	switch {
	case b == nil:
		return 0
	case b.Reason == reasonScaleDownRefused, b.Reason == v1alpha1.ReasonVersionChangeRefused:
		return refusedRetry
	case b.Reason == v1alpha1.ReasonProgressing, b.Reason == reasonScalingDown, b.Reason == reasonScalingUp:
		return settleRetry
	}
	return 0
}
