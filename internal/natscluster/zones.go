package natscluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// Zones: servers carry their zone as a JetStream server tag (render), the
// operator decides whether a stream's replicas must sit in different zones
// (plan.SpreadReplicasOverZones) from the zones of the nodes the servers
// may run on and of the servers themselves, and reports the servers per
// zone and whether the loss of a zone leaves a quorum.

// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch

// NodeZones reads the zones of the nodes a pod template may be scheduled
// to. Only their metadata is held (a metadata informer): a node's status
// is large, and nothing of it is needed.
type NodeZones struct{ Reader client.Reader }

// Zones are the zone labels of the nodes matching the template's node
// selector and required node affinity, "" for a node without one. Taints
// are not read (they sit in the node's spec): a tainted zone counts.
func (n NodeZones) Zones(ctx context.Context, spec v1alpha1.PodTemplateSpec) ([]string, error) {
	var nodes metav1.PartialObjectMetadataList
	nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := n.Reader.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	fits := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity)
	var zones []string
	for i := range nodes.Items {
		node := &corev1.Node{ObjectMeta: nodes.Items[i].ObjectMeta}
		if ok, err := fits.Match(node); err == nil && ok {
			zones = append(zones, node.Labels[v1alpha1.LabelZone])
		}
	}
	return zones, nil
}

// zonePlacement is what a pass decided and saw of zones.
type zonePlacement struct {
	// nodeZones are the eligible nodes' zones; nil when nodes are not
	// read (a namespaced install) or could not be.
	nodeZones []string
	spread    bool
}

// placeZones decides, before the children are rendered, whether replicas
// spread over zones. The servers' own zones come from their pods' labels
// in the cache.
func (r *Reconciler) placeZones(ctx context.Context, c *v1alpha1.NatsCluster) (zonePlacement, error) {
	if !c.Spec.SpreadsZones() {
		return zonePlacement{}, nil
	}
	z := zonePlacement{nodeZones: r.eligibleNodeZones(ctx, c)}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		return zonePlacement{}, err
	}
	z.spread = plan.SpreadReplicasOverZones(true, z.nodeZones, slices.Collect(maps.Values(serverZones(pods.Items))))
	return z, nil
}

// nodeReadBound bounds a read of the nodes: the first starts their cache,
// which never fills where the operator may not list nodes (an install
// whose RBAC predates zones).
const nodeReadBound = 5 * time.Second

// eligibleNodeZones are the zones of the nodes c's servers may run on;
// nil when they are not read (a namespaced install) or cannot be, and
// then the servers' own zones decide.
func (r *Reconciler) eligibleNodeZones(ctx context.Context, c *v1alpha1.NatsCluster) []string {
	if r.Nodes == nil || !c.Spec.SpreadsZones() {
		return nil
	}
	bounded, cancel := context.WithTimeout(ctx, nodeReadBound)
	defer cancel()
	zones, err := r.Nodes.Zones(bounded, c.Spec.PodTemplate)
	if err != nil {
		logf.FromContext(ctx).Info("the nodes' zones are not known: the servers' own zones decide", "error", err.Error())
		return nil
	}
	return zones
}

// serverZones maps each scheduled server pod to its zone label.
func serverZones(pods []corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			out[p.Name] = p.Labels[v1alpha1.LabelZone]
		}
	}
	return out
}

// observeZones fills in the servers per zone and, where zones exist, the
// ZoneRedundant verdict.
func observeZones(obs *status.ClusterObservation, pods []corev1.Pod) {
	servers := serverZones(pods)
	labelled := false
	for _, zone := range servers {
		labelled = labelled || zone != ""
	}
	if !labelled {
		return
	}
	for _, zs := range plan.ServersByZone(servers) {
		obs.Zones = append(obs.Zones, v1alpha1.ZoneServers{Zone: zs.Zone, Servers: zs.Servers})
	}
	verdict := plan.CheckZoneRedundancy(servers, obs.NodeZones)
	if !verdict.Known {
		return
	}
	v := status.Verdict{Type: v1alpha1.ConditionZoneRedundant, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonZonesSurviveLoss, Message: verdict.Message}
	if !verdict.Redundant {
		v.Status, v.Reason = metav1.ConditionFalse, v1alpha1.ReasonQuorumInOneZone
	}
	obs.ZoneRedundancy = &v
}
