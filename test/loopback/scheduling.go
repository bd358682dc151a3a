package loopback

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// The scheduler's filters that a one-node cluster can fail: the pod's node
// selector and required node affinity against the node's labels, and the
// node's taints against the pod's tolerations. Resources are not checked:
// the node has room for any test (node.go).

// unschedulableReason is the reason the scheduler gives a pod no node fits.
const unschedulableReason = corev1.PodReasonUnschedulable

// unschedulable says why pod cannot run on node, in the scheduler's words,
// or "" when it fits.
func unschedulable(pod *corev1.Pod, node *corev1.Node) string {
	var why string
	switch {
	case !matchesNodeSelector(pod, node.Labels):
		why = "1 node(s) didn't match Pod's node affinity/selector"
	default:
		if taint := untoleratedTaint(pod.Spec.Tolerations, node.Spec.Taints); taint != nil {
			why = fmt.Sprintf("1 node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)
		}
	}
	if why == "" {
		return ""
	}
	return "0/1 nodes are available: " + why + ". preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
}

// matchesNodeSelector: every label of the node selector, and one term of
// the required node affinity (when there is one), hold for the node.
func matchesNodeSelector(pod *corev1.Pod, labels map[string]string) bool {
	for k, v := range pod.Spec.NodeSelector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		// A term with no expressions matches nothing (as in the scheduler);
		// matchFields would name the node, which is not worth modelling.
		if len(term.MatchExpressions) > 0 && len(term.MatchFields) == 0 && allHold(term.MatchExpressions, labels) {
			return true
		}
	}
	return false
}

func allHold(reqs []corev1.NodeSelectorRequirement, labels map[string]string) bool {
	for _, r := range reqs {
		if !holds(r, labels) {
			return false
		}
	}
	return true
}

func holds(r corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, ok := labels[r.Key]
	in := func() bool {
		for _, want := range r.Values {
			if v == want {
				return true
			}
		}
		return false
	}
	compare := func(greater bool) bool {
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return (greater && have > want) || (!greater && have < want)
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && in()
	case corev1.NodeSelectorOpNotIn:
		return !ok || !in()
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt:
		return compare(true)
	case corev1.NodeSelectorOpLt:
		return compare(false)
	}
	return false
}

// untoleratedTaint is the first taint that keeps pods off the node
// (NoSchedule or NoExecute; PreferNoSchedule only discourages) which no
// toleration of the pod tolerates.
func untoleratedTaint(tolerations []corev1.Toleration, taints []corev1.Taint) *corev1.Taint {
	for i := range taints {
		taint := &taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := false
		for j := range tolerations {
			if tolerates(&tolerations[j], taint) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return taint
		}
	}
	return nil
}

// tolerates: an empty effect tolerates every effect, an empty key with
// Exists every taint, Exists any value, Equal (the default) only the same.
func tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return t.Key != "" && t.Value == taint.Value
	}
	return false
}
