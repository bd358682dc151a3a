package accountcontroller

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
)

// +kubebuilder:rbac:groups=kubenats.io,resources=natsaccounts;natsusers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=natsaccounts/status;natsusers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=natsaccounts/finalizers;natsusers/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// Servers reaches a cluster's servers as the operator's system user.
type Servers interface {
	// SystemConn connects to c's ready servers; ready are their names,
	// under which each answers a system request for itself.
	SystemConn(ctx context.Context, c *v1alpha1.NatsCluster) (nc *nats.Conn, ready []string, err error)
	// AccountConn connects to c's ready servers with a creds file.
	AccountConn(ctx context.Context, c *v1alpha1.NatsCluster, creds []byte) (*nats.Conn, error)
	// ClientCA is the CA of c's client certificates, nil without client TLS.
	ClientCA(ctx context.Context, c *v1alpha1.NatsCluster) ([]byte, error)
}

// Reconciler runs NatsAccounts and their NatsUsers.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache: the keys Secret is read from the API
	// server before any is made, so that a cache that has not seen it yet
	// never makes an account a second identity.
	APIReader client.Reader
	Applier   *apply.Applier
	Scheme    *runtime.Scheme
	Recorder  recorder.EventRecorder
	Servers   Servers
	Workers   int
	// WorkersPerNamespace is how many of the Workers one namespace's
	// accounts may hold at once (a quarter when zero, at least one).
	WorkersPerNamespace int
	// SigningKeyGrace is how long a rotated-out signing key stays in the
	// account at least (DefaultSigningKeyGrace when zero): time for the
	// kubelet to bring the re-issued creds into pods that mount them.
	SigningKeyGrace time.Duration
}

// DefaultSigningKeyGrace covers the kubelet's refresh of a mounted Secret
// (about a minute) several times over.
const DefaultSigningKeyGrace = 10 * time.Minute

// resync is how often an account's status (connections, JetStream usage)
// is read again with nothing changed; the JWT is pushed again with it, so
// a server that missed a push has it within this time, not only within
// the resolver's own two-minute sync.
const resync = 30 * time.Second

// pushWait bounds how long a pass waits for the servers' answers.
const pushWait = 5 * time.Second

// retrySoon is a pass that could not reach its end for a passing reason
// (servers not ready, a write or a push that failed): the refusals that
// only a change can lift (a cluster that does not admit the account, its
// keys gone) wait for that change's event instead.
var retrySoon = ctrl.Result{RequeueAfter: 3 * time.Second}

// Reconcile is one pass over an account and its users.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	users, err := r.usersOf(ctx, req.Namespace, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	acct := &v1alpha1.NatsAccount{}
	switch err := r.Get(ctx, req.NamespacedName, acct); {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, r.orphanUsers(ctx, users)
	case err != nil:
		return ctrl.Result{}, err
	}
	if !acct.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, acct, users)
	}
	if controllerutil.AddFinalizer(acct, v1alpha1.AccountFinalizer) {
		if err := r.Update(ctx, acct); err != nil {
			return ctrl.Result{}, err
		}
	}
	cluster, admitted, err := r.accountCluster(ctx, acct)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil {
		return ctrl.Result{}, r.refuse(ctx, acct, users, v1alpha1.ReasonClusterNotAdmitted, clusterNotAdmitted)
	}
	if !admitted {
		return r.suspend(ctx, cluster, acct, users)
	}
	ref := accountRef(acct)
	keys, problem, err := r.accountKeys(ctx, cluster, acct)
	if err != nil {
		return ctrl.Result{}, err
	}
	if problem != nil {
		if problem.reason == v1alpha1.ReasonAccountKeysMismatch {
			r.Recorder.Eventf(acct, nil, corev1.EventTypeWarning, problem.reason, "Sign", "%s", problem.message)
		}
		return ctrl.Result{}, r.refuse(ctx, acct, users, problem.reason, problem.message)
	}
	if keys, err = r.rotate(ctx, cluster, acct, keys); err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, err.Error())
	}

	// Users: who gets credentials, which keys are revoked. Revocations
	// are recorded before the push that carries them and before any new
	// creds are written.
	views, err := r.userViews(ctx, users)
	if err != nil {
		return ctrl.Result{}, err
	}
	ca, err := r.Servers.ClientCA(ctx, cluster)
	if err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, "the cluster's client CA: "+err.Error())
	}
	target := credsTarget{cluster: cluster, caPEM: ca}
	plan := planUsers(views, func(u *v1alpha1.NatsUser) string { return target.digest(u, keys) })
	if keys, err = r.revoke(ctx, cluster, keys, plan.Revoke); err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, err.Error())
	}
	seeds := map[types.UID][]byte{}
	for _, v := range views {
		seeds[v.User.UID] = v.seed
	}
	issued := r.issue(ctx, plan, seeds, keys, target)
	if keys, err = r.dropPrevious(ctx, cluster, acct, keys, plan, issued); err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, err.Error())
	}

	peers, err := r.peers(ctx, cluster, ref)
	if err != nil {
		return ctrl.Result{}, err
	}
	operator, signedBy, err := r.operatorSigner(ctx, cluster)
	if err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, err.Error())
	}
	limits, clamps := boundLimits(cluster, acct)
	limitsV := limitsVerdict(cluster, clamps)
	r.warnClamped(acct, limitsV)
	jwtText, refused, err := signAccount(acct, ref, keys, peers, operator, limits)
	if err != nil {
		return retrySoon, r.refuse(ctx, acct, users, v1alpha1.ReasonPushFailed, err.Error())
	}
	usage, pushErr := r.push(ctx, cluster, keys, jwtText, accountHasJetStream(acct))
	log.FromContext(ctx).V(1).Info("account pushed", "generation", acct.Generation, "revoked", len(keys.Revoked),
		"issued", len(plan.Issue), "released", len(plan.Release), "error", pushErr)
	if pushErr == nil {
		if err := r.release(ctx, plan.Release); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.writeStatuses(ctx, acct, keys, plan, issued, refused, signedBy, usage, pushErr, limitsV); err != nil {
		return ctrl.Result{}, err
	}
	if pushErr != nil {
		return retrySoon, nil
	}
	return ctrl.Result{RequeueAfter: nextPass(keys, time.Now())}, nil
}

// usersOf lists the NatsUsers of account ns/name from the cache.
func (r *Reconciler) usersOf(ctx context.Context, ns, name string) ([]*v1alpha1.NatsUser, error) {
	var list v1alpha1.NatsUserList
	if err := r.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{userAccountIndex: name}); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.NatsUser, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// release drops the finalizer of deleted users whose revocation the
// servers took.
func (r *Reconciler) release(ctx context.Context, users []*v1alpha1.NatsUser) error {
	for _, u := range users {
		if controllerutil.RemoveFinalizer(u, v1alpha1.UserFinalizer) {
			if err := r.Update(ctx, u); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			r.Recorder.Eventf(u, nil, corev1.EventTypeNormal, "Revoked", "Delete",
				"the user's key is revoked in its account on every server")
		}
	}
	return nil
}

func accountHasJetStream(a *v1alpha1.NatsAccount) bool { return a.Spec.Limits.JetStream != nil }
