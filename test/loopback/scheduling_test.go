package loopback

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestUnschedulable(t *testing.T) {
	node := &corev1.Node{}
	node.Labels = map[string]string{"zone": "a", "disk": "ssd", "gen": "5"}
	tainted := node.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "nats", Effect: corev1.TaintEffectNoSchedule}}
	preferNot := node.DeepCopy()
	preferNot.Spec.Taints = []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	noExecute := node.DeepCopy()
	noExecute.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}}

	affinity := func(reqs ...corev1.NodeSelectorRequirement) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}},
				},
			}}
		}
	}
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	selector := func(sel map[string]string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.NodeSelector = sel }
	}
	tolerate := func(tols ...corev1.Toleration) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.Tolerations = tols }
	}

	for _, tc := range []struct {
		name string
		node *corev1.Node
		spec func(*corev1.PodSpec)
		want string // "" fits; else a part of the message
	}{
		{"no constraints", node, func(*corev1.PodSpec) {}, ""},
		{"selector the node has", node, selector(map[string]string{"zone": "a", "disk": "ssd"}), ""},
		{"selector label missing", node, selector(map[string]string{"kubenats.io/absent": "true"}), "didn't match Pod's node affinity/selector"},
		{"selector value differs", node, selector(map[string]string{"zone": "b"}), "didn't match"},
		{"affinity In", node, affinity(req("zone", corev1.NodeSelectorOpIn, "b", "a")), ""},
		{"affinity In, no value matches", node, affinity(req("zone", corev1.NodeSelectorOpIn, "b", "c")), "didn't match"},
		{"affinity NotIn", node, affinity(req("zone", corev1.NodeSelectorOpNotIn, "a")), "didn't match"},
		{"affinity NotIn on a missing label", node, affinity(req("rack", corev1.NodeSelectorOpNotIn, "r1")), ""},
		{"affinity Exists", node, affinity(req("disk", corev1.NodeSelectorOpExists)), ""},
		{"affinity DoesNotExist", node, affinity(req("disk", corev1.NodeSelectorOpDoesNotExist)), "didn't match"},
		{"affinity Gt", node, affinity(req("gen", corev1.NodeSelectorOpGt, "4")), ""},
		{"affinity Lt", node, affinity(req("gen", corev1.NodeSelectorOpLt, "4")), "didn't match"},
		{"affinity with every expression needed", node, affinity(req("zone", corev1.NodeSelectorOpIn, "a"), req("disk", corev1.NodeSelectorOpIn, "hdd")), "didn't match"},
		{"untolerated NoSchedule taint", tainted, func(*corev1.PodSpec) {}, "untolerated taint {dedicated: nats}"},
		{"tolerated by Equal", tainted, tolerate(corev1.Toleration{Key: "dedicated", Value: "nats", Effect: corev1.TaintEffectNoSchedule}), ""},
		{"Equal with another value", tainted, tolerate(corev1.Toleration{Key: "dedicated", Value: "kafka"}), "untolerated taint"},
		{"tolerated by Exists on the key", tainted, tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}), ""},
		{"tolerated by Exists on every key", tainted, tolerate(corev1.Toleration{Operator: corev1.TolerationOpExists}), ""},
		{"a toleration of another effect", tainted, tolerate(corev1.Toleration{Key: "dedicated", Value: "nats", Effect: corev1.TaintEffectNoExecute}), "untolerated taint"},
		{"PreferNoSchedule does not keep a pod off", preferNot, func(*corev1.PodSpec) {}, ""},
		{"NoExecute keeps a pod off", noExecute, func(*corev1.PodSpec) {}, "untolerated taint {node.kubernetes.io/unreachable: }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			tc.spec(&pod.Spec)
			got := unschedulable(pod, tc.node)
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("unschedulable = %q, want it to fit", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("unschedulable = %q, want a message with %q", got, tc.want)
			case tc.want != "" && !strings.HasPrefix(got, "0/1 nodes are available: "):
				t.Fatalf("unschedulable = %q, not in the scheduler's words", got)
			}
		})
	}
}
