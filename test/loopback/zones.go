package loopback

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// A zoned loopback cluster (Options.Zones) has one node per zone, all run
// by the one kubelet on this machine's loopback addresses. What differs
// between them is what Kubernetes knows: their labels, which the API
// server's PodTopologyLabels admission copies onto each pod it binds, and
// the placement. The model places as the scheduler's PodTopologySpread
// scoring does for the constraints kubenats renders (ScheduleAnyway): the
// fitting node whose domains hold the fewest matching pods, the first
// constraint first. It cannot fail a zone's network apart from the others.

// regionOfZones is the region label of every zoned node.
const regionOfZones = "loopback"

// loopbackNode is one node the kubelet runs.
type loopbackNode struct {
	name   string
	labels map[string]string
}

// zonedNodes are the nodes for zones: one named base when there is none.
func zonedNodes(base string, zones []string) []loopbackNode {
	if len(zones) == 0 {
		return []loopbackNode{{name: base}}
	}
	out := make([]loopbackNode, 0, len(zones))
	for _, z := range zones {
		out = append(out, loopbackNode{name: base + "-" + z, labels: map[string]string{
			corev1.LabelTopologyZone: z, corev1.LabelTopologyRegion: regionOfZones,
		}})
	}
	return out
}

// runs reports whether name is one of the kubelet's nodes.
func (k *kubelet) runs(name string) bool {
	return slices.ContainsFunc(k.nodes, func(n loopbackNode) bool { return n.name == name })
}

// place picks pod's node, or says why none fits (the scheduler's message).
// The caller holds k.placing.
func (k *kubelet) place(pod *corev1.Pod) (string, string) {
	var fitting []*corev1.Node
	var why string
	for _, n := range k.nodes {
		node, err := k.readNode(n.name)
		if err != nil {
			// Bind as before: the node is ours, whatever its labels.
			node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}}
		}
		if reason := unschedulable(pod, node); reason != "" {
			why = reason
			continue
		}
		fitting = append(fitting, node)
	}
	if len(fitting) == 0 {
		return "", why
	}
	best, bestScore := fitting[0].Name, []int(nil)
	for _, node := range fitting {
		score := k.spreadScore(pod, node)
		if bestScore == nil || slices.Compare(score, bestScore) < 0 {
			best, bestScore = node.Name, score
		}
	}
	return best, ""
}

// spreadScore counts, per topology spread constraint of pod in order, the
// pods its selector matches in node's domain of that constraint's key.
func (k *kubelet) spreadScore(pod *corev1.Pod, node *corev1.Node) []int {
	score := make([]int, 0, len(pod.Spec.TopologySpreadConstraints))
	for _, c := range pod.Spec.TopologySpreadConstraints {
		domain, ok := node.Labels[c.TopologyKey]
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if !ok || err != nil {
			score = append(score, 0)
			continue
		}
		score = append(score, k.podsInDomain(pod, selector, c.TopologyKey, domain))
	}
	return score
}

// podsInDomain counts the live pods of pod's namespace matching selector
// on nodes whose key label is domain.
func (k *kubelet) podsInDomain(pod *corev1.Pod, selector labels.Selector, key, domain string) int {
	others, err := k.pods.Pods(pod.Namespace).List(selector)
	if err != nil {
		return 0
	}
	n := 0
	for _, other := range others {
		if other.UID == pod.UID || other.DeletionTimestamp != nil {
			continue
		}
		nodeName := other.Spec.NodeName
		if nodeName == "" {
			nodeName = k.placed[other.UID]
		}
		if nodeName == "" {
			continue
		}
		if node, err := k.readNode(nodeName); err == nil && node.Labels[key] == domain {
			n++
		}
	}
	return n
}
