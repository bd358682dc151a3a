// Package jetstreamcontroller holds one generic reconciler for the four
// JetStream kinds (Stream, Consumer, KeyValue, ObjectStore): it does the
// Kubernetes part (target, ownership, finalizer, status, wake-ups) and
// each kind only declares how its server object is read, written and
// deleted (jetstream.Kind).
package jetstreamcontroller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/jobs"
	"github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/internal/pause"
)

// resync is how often a settled resource is compared with the server even
// without an advisory: the safety net under advisory-driven drift detection.
const resync = 10 * time.Minute

// mirrorResync is resync for a mirror: its lag in status is what a user
// promoting a standby reads, and it goes stale with every message its
// origin takes.
const mirrorResync = 30 * time.Second

// conflictRetry is how soon a pass whose status write lost a race runs again.
const conflictRetry = 100 * time.Millisecond

// quietRetries is how many retries a brand-new waiting resource gets before
// its status says why it waits.
const quietRetries = 2

// streamRetry is the least wait before a Consumer looks for its stream
// again: the stream's creation advisory wakes it sooner, so the retry is
// only the safety net, and two quiet ones give a stream applied with its
// consumers ten seconds to appear before either writes a status.
const streamRetry = 5 * time.Second

// Servers is what the JetStream reconcilers need to reach a NatsCluster's
// servers beyond its pods' addresses (the pool's): its client
// certificate.
type Servers interface {
	// ClientCertificate is the data of c's client certificate Secret, nil
	// while it cannot be read (missing, or not one kubenats may use).
	ClientCertificate(ctx context.Context, c *v1alpha1.NatsCluster) (map[string][]byte, error)
}

// Base is what the four JetStream reconcilers share.
type Base struct {
	client.Client
	// APIReader reads past the cache, to confirm that the resource a
	// server object's owner mark names is gone.
	APIReader client.Reader
	// UserSecrets holds the Secrets their owners opted in for kubenats
	// (SecretAllowLabel), the only user Secrets the operator reads; a change
	// of one wakes the resources that name it.
	UserSecrets cache.Cache
	// Servers reads a NatsCluster's client certificate (servers.Reach).
	Servers  Servers
	Pool     *jetstream.Pool
	Recorder recorder.EventRecorder
	// Namespaces are those the operator watches; empty: all.
	Namespaces []string
	// ConnectionNamespaces, when not empty, are the only namespaces whose
	// resources may use spec.connection (--connection-allowed-namespaces).
	ConnectionNamespaces []string
	// OperatorPaused pauses every resource (--pause-reconciliation): each
	// is observed and reported, nothing is written to its servers.
	OperatorPaused bool
	// Applier writes a Stream's restore Job (restore.go), of Image, the
	// operator's own image.
	Applier *apply.Applier
	Image   string
}

// NewBackoff is the retry schedule of waiting JetStream resources.
func NewBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](250*time.Millisecond, time.Minute)
}

// Reconciler keeps one JetStream kind's server objects equal to
// their resources.
type Reconciler[T v1alpha1.JetStreamObject, C any] struct {
	*Base
	Kind jetstream.Kind[T, C]
	// Backoff spaces retries of a waiting resource, up to about a minute,
	// forever: NATS that is not up yet is no reason to give up.
	Backoff workqueue.TypedRateLimiter[reconcile.Request]

	written writtenStatuses
}

// Reconcile runs one pass for one resource and writes its status once.
func (r *Reconciler[T, C]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Kind.New()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.Pool.Release(r.user(req.Namespace, req.Name))
			r.written.forget(req.NamespacedName)
			metrics.ResourcesSet.Delete(r.Kind.Name(), req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	paused := pause.Of(obj, r.OperatorPaused)
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.finalize(ctx, req, obj, paused)
	}
	// A paused resource gets no finalizer either: pause writes nothing but
	// status, and one deleted before it ever had one has nothing of
	// kubenats' on the server.
	if !paused.Paused && !controllerutil.ContainsFinalizer(obj, v1alpha1.JetStreamFinalizer) {
		patch := client.MergeFrom(obj.DeepCopyObject().(T))
		controllerutil.AddFinalizer(obj, v1alpha1.JetStreamFinalizer)
		if err := r.Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}

	current := r.written.current(obj)
	prev := &current
	var out outcome
	if paused.Paused {
		out = r.observePaused(ctx, obj, paused)
	} else {
		out = r.sync(ctx, obj)
	}
	next := jetStreamStatus(obj, prev, out, paused, metav1.Now())
	metrics.ResourcesSet.Set(r.Kind.Name(), obj.GetNamespace(), obj.GetName(), resourceState(next))
	r.announceJetStream(obj, out)
	// A brand-new resource that must wait (its stream is a moment behind)
	// gets a few retries before its status says so: one API write less for
	// every consumer created together with its stream.
	quiet := !paused.Paused && out.retry && len(prev.Conditions) == 0 && r.Backoff.NumRequeues(req) < quietRetries
	if !quiet && !equality.Semantic.DeepEqual(*prev, next) {
		*obj.GetJetStreamStatus() = next
		if err := r.Status().Update(ctx, obj); apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		r.written.wrote(obj)
	}
	return r.schedule(req, out, next.Mirror != nil), nil
}

// schedule is when the resource is looked at again: soon with backoff
// while it waits, at the resync period once settled.
func (r *Reconciler[T, C]) schedule(req ctrl.Request, out outcome, mirror bool) ctrl.Result {
	switch {
	case out.retry && out.reason == reasonRestoring:
		// Its Job's changes wake it; meanwhile the progress is asked for.
		return ctrl.Result{RequeueAfter: min(r.Backoff.When(req), jobs.ProgressLook)}
	case out.retry && out.reason == reasonStreamNotFound:
		return ctrl.Result{RequeueAfter: max(r.Backoff.When(req), streamRetry)}
	case out.retry:
		return ctrl.Result{RequeueAfter: r.Backoff.When(req)}
	case out.ready && mirror:
		r.Backoff.Forget(req)
		return ctrl.Result{RequeueAfter: mirrorResync}
	case out.ready:
		r.Backoff.Forget(req)
		return ctrl.Result{RequeueAfter: resync}
	}
	r.Backoff.Forget(req)
	return ctrl.Result{} // needs the user: a spec change wakes it
}

// user is the resource's name in the pool.
func (r *Reconciler[T, C]) user(ns, name string) jetstream.User {
	return jetstream.User(r.Kind.Name() + "/" + ns + "/" + name)
}

// owner is the mark kubenats leaves in the server object's metadata.
func (r *Reconciler[T, C]) owner(obj T) ownerMark {
	return ownerMark{kind: r.Kind.Name(), namespace: obj.GetNamespace(), name: obj.GetName(), uid: obj.GetUID()}
}
