package natscluster

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/convert"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// reasonTakeoverRefused: the release named in spec.takeover cannot be
// taken over; nothing of it was touched.
const reasonTakeoverRefused = "TakeoverRefused"

// The takeover of a release of the official chart (spec.takeover). The
// first pass, before any child is applied, releases the chart's
// StatefulSet: its pods are labelled as kubenats' (so that the operator
// sees them), the chart's objects that bear the names of the cluster's
// children (ConfigMap, Services, budget) become the cluster's, and the
// StatefulSet is deleted with its pods orphaned. The cluster's own
// StatefulSet, applied next with the chart's selector and claim names,
// adopts the pods, and the rollout replaces them one at a time
// (plan.TakeoverPhase says when the routes close).

// adoptChartRelease releases the chart's StatefulSet, once, after checking
// that it is the release's and that everything its configuration says
// can be carried. A blocker stops the pass.
func (r *Reconciler) adoptChartRelease(ctx context.Context, c *v1alpha1.NatsCluster) (*status.Blocker, error) {
	if !c.Spec.TakingOver() || (c.Status.Takeover != nil && c.Status.Takeover.Phase != "") {
		return nil, nil
	}
	var sts appsv1.StatefulSet
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts)
	switch {
	case apierrors.IsNotFound(err):
		// Released by an earlier pass (the client Service is the
		// cluster's then), or never there.
		if taken, err := r.tookOver(ctx, c); err != nil || taken {
			return nil, err
		}
		return refuseTakeover("there is no StatefulSet %s of the chart's release %s to take over", c.StatefulSetName(), c.Spec.Takeover.HelmRelease), nil
	case err != nil:
		return nil, err
	case metav1.IsControlledBy(&sts, c):
		return nil, nil // adopted; the status write that said so was lost
	case !sts.DeletionTimestamp.IsZero():
		return &status.Blocker{Reason: v1alpha1.ReasonProgressing, Message: "taking over the chart's release: waiting for its StatefulSet to let its pods go"}, nil
	}
	if why := notTheChartsRelease(c, &sts); why != "" {
		return refuseTakeover("StatefulSet %s is not the chart's release %s: %s", sts.Name, c.Spec.Takeover.HelmRelease, why), nil
	}
	if lost, err := r.chartSettingsLost(ctx, c, &sts); err != nil {
		return nil, err
	} else if lost != "" {
		return refuseTakeover("the release %s has settings kubenats cannot carry, so none of its servers was touched: %s", c.Spec.Takeover.HelmRelease, lost), nil
	}
	if err := r.labelChartPods(ctx, c); err != nil {
		return nil, err
	}
	for _, obj := range chartNamesakes(c) {
		if blocker, err := r.claimChartObject(ctx, c, obj); err != nil || blocker != nil {
			return blocker, err
		}
	}
	orphan := metav1.DeletePropagationOrphan
	if err := r.Delete(ctx, &sts, client.Preconditions{UID: &sts.UID}, client.PropagationPolicy(orphan)); client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "TakingOver", "Release",
		"released the chart's StatefulSet %s (its pods and claims kept); its servers are replaced one at a time", sts.Name)
	return &status.Blocker{Reason: v1alpha1.ReasonProgressing, Message: "taking over the chart's release: its StatefulSet released, its pods and claims kept"}, nil
}

func refuseTakeover(format string, args ...any) *status.Blocker {
	return &status.Blocker{Reason: reasonTakeoverRefused, Message: fmt.Sprintf(format, args...), Fatal: true}
}

// tookOver reports whether an earlier pass released the chart's
// StatefulSet: the client Service, which it claimed first, is the
// cluster's. The pods are labelled again, in case one was made anew since.
func (r *Reconciler) tookOver(ctx context.Context, c *v1alpha1.NatsCluster) (bool, error) {
	var svc corev1.Service
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.ClientServiceName()}, &svc)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(&svc, c)) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, r.labelChartPods(ctx, c)
}

// notTheChartsRelease says why sts is not the chart's StatefulSet of the
// release, "" when it is: its labels, selector and claim template.
func notTheChartsRelease(c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet) string {
	l := sts.Labels
	switch {
	case !strings.HasPrefix(l["helm.sh/chart"], "nats-") || l[render.LabelName] != "nats":
		return "it is not labelled as the official chart's (helm.sh/chart nats-*, app.kubernetes.io/name nats)"
	case l[render.LabelInstance] != c.Spec.Takeover.HelmRelease:
		return "its app.kubernetes.io/instance is " + l[render.LabelInstance]
	case sts.Spec.Selector == nil || !equalLabels(sts.Spec.Selector.MatchLabels, render.SelectorLabels(c)) || len(sts.Spec.Selector.MatchExpressions) != 0:
		return "its selector is not the chart's"
	case len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != c.DataVolume():
		return "its data claims are not the chart's " + c.DataVolume() + "-<pod>"
	case sts.Spec.ServiceName != c.HeadlessServiceName():
		return "its headless Service is not " + c.HeadlessServiceName()
	}
	return ""
}

func equalLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// chartSettingsLost is what `kubenats convert` would name as not carried
// from the live release, "" when everything is.
func (r *Reconciler) chartSettingsLost(ctx context.Context, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet) (string, error) {
	sts = sts.DeepCopy()
	sts.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	objs := []any{sts}
	var cm corev1.ConfigMap
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.ConfigMapName()}, &cm); {
	case err == nil:
		cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
		objs = append(objs, &cm)
	case !apierrors.IsNotFound(err):
		return "", err
	}
	docs := make([][]byte, 0, len(objs))
	for _, o := range objs {
		doc, err := yaml.Marshal(o)
		if err != nil {
			return "", err
		}
		docs = append(docs, doc)
	}
	res, err := convert.Chart(docs, c.Namespace)
	if err != nil {
		return err.Error(), nil
	}
	lost := make([]string, len(res.Lost))
	for i, l := range res.Lost {
		lost[i] = l.String()
	}
	return strings.Join(lost, "; "), nil
}

// labelChartPods labels the release's pods as kubenats': the operator's
// caches hold only what it labelled, and the rollout must see them to
// replace them. Their controller is checked by the rollout, as for any pod
// (servers.MemberPods): the cluster's StatefulSet adopts them.
func (r *Reconciler) labelChartPods(ctx context.Context, c *v1alpha1.NatsCluster) error {
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Labels[render.LabelManagedBy] == render.ManagedBy {
			continue
		}
		before := p.DeepCopy()
		p.Labels[render.LabelManagedBy] = render.ManagedBy
		if err := r.Patch(ctx, p, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// chartNamesakes are the chart's objects that bear the names of the
// cluster's children: they become the cluster's, in place, so that the
// clients' Service keeps its address.
func chartNamesakes(c *v1alpha1.NatsCluster) []client.Object {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: c.Namespace, Name: name} }
	return []client.Object{
		&corev1.Service{ObjectMeta: meta(c.ClientServiceName())},
		&corev1.Service{ObjectMeta: meta(c.HeadlessServiceName())},
		&corev1.ConfigMap{ObjectMeta: meta(c.ConfigMapName())},
		&policyv1.PodDisruptionBudget{ObjectMeta: meta(c.PodDisruptionBudgetName())},
	}
}

// claimChartObject makes the chart's obj the cluster's: labelled, owned,
// and its selector naming kubenats' label (the chart's pods carry it now).
// One that is not the release's is refused, as any name conflict is.
func (r *Reconciler) claimChartObject(ctx context.Context, c *v1alpha1.NatsCluster, obj client.Object) (*status.Blocker, error) {
	switch err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); {
	case apierrors.IsNotFound(err):
		return nil, nil // the cluster makes its own
	case err != nil:
		return nil, err
	case metav1.IsControlledBy(obj, c):
		return nil, nil
	}
	l := obj.GetLabels()
	if l[render.LabelInstance] != c.Spec.Takeover.HelmRelease || !strings.HasPrefix(l["helm.sh/chart"], "nats-") || len(obj.GetOwnerReferences()) != 0 {
		return &status.Blocker{Reason: v1alpha1.ReasonNameConflict, Fatal: true,
			Message: fmt.Sprintf("%s %s is neither the cluster's nor the chart release's: rename or remove it", kindOf(obj), obj.GetName())}, nil
	}
	before := obj.DeepCopyObject().(client.Object)
	l[render.LabelManagedBy] = render.ManagedBy
	obj.SetLabels(l)
	switch o := obj.(type) {
	case *corev1.Service:
		o.Spec.Selector = render.ManagedSelectorLabels(c)
	case *policyv1.PodDisruptionBudget:
		o.Spec.Selector = &metav1.LabelSelector{MatchLabels: render.ManagedSelectorLabels(c)}
	}
	if err := controllerutil.SetControllerReference(c, obj, r.Scheme()); err != nil {
		return nil, err
	}
	return nil, r.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// takeoverProgress is the takeover's phase after this pass
// (plan.TakeoverPhase), nil for a cluster that takes nothing over.
func takeoverProgress(c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet, pods []corev1.Pod, blocker *status.Blocker) *v1alpha1.TakeoverStatus {
	if !c.Spec.TakingOver() {
		return nil
	}
	o := plan.TakeoverObservation{Adopted: sts != nil, Want: int(c.Spec.ReplicaCount()), Routes: render.RouteMode(c), Blocked: blocker != nil}
	if c.Status.Takeover != nil {
		o.Phase = string(c.Status.Takeover.Phase)
	}
	for i := range pods {
		p := &pods[i]
		o.Servers = append(o.Servers, plan.Server{
			Name:        p.Name,
			Outdated:    sts == nil || p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision,
			Ready:       servers.PodReady(p),
			Terminating: !p.DeletionTimestamp.IsZero(),
			Routes:      render.PodRouteMode(c, p.Annotations),
		})
	}
	phase := plan.TakeoverPhase(o)
	if phase == "" {
		return nil // not begun
	}
	return &v1alpha1.TakeoverStatus{Phase: v1alpha1.TakeoverPhase(phase)}
}
