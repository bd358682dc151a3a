package render

import (
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Label keys and values shared by every child.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelVersion   = "app.kubernetes.io/version"

	// ManagedBy is the value of LabelManagedBy on everything kubenats makes;
	// the operator's caches select on it.
	ManagedBy = "kubenats"
)

// SelectorLabels select the pods of c. They never change for the life of
// the StatefulSet (its selector is immutable).
func SelectorLabels(c *v1alpha1.NatsCluster) map[string]string {
	l := map[string]string{
		LabelName:     "nats",
		LabelInstance: c.Name,
	}
	if c.Spec.TakingOver() {
		l[LabelComponent] = chartComponent // the chart's selector, which the adopted pods match
	}
	return l
}

// ManagedSelectorLabels select the pods of c and no namesake: a NATS
// installed by Helm (or anyone) under the same name carries the same
// app.kubernetes.io/name and instance, so every selector the operator can
// still change names its managed-by label too. A PeerAuthentication, a
// NetworkPolicy, a PodDisruptionBudget or a Service that selected the
// namesake's pods would loosen their mTLS, open their ports to this
// cluster's peers, count them in this budget or send this cluster's
// clients to them. Every pod kubenats ever rendered carries the label, so
// changing a live selector to these loses none of them. The StatefulSet's
// own selector (immutable) and its claim template keep SelectorLabels; the
// StatefulSet adopts no pod another controller owns.
func ManagedSelectorLabels(c *v1alpha1.NatsCluster) map[string]string {
	l := SelectorLabels(c)
	l[LabelManagedBy] = ManagedBy
	return l
}

// labels are the labels of every child of c.
func labels(c *v1alpha1.NatsCluster) map[string]string {
	l := SelectorLabels(c)
	l[LabelComponent] = componentLabel(c)
	l[LabelManagedBy] = ManagedBy
	return l
}

// objectMeta is the metadata of a child named name.
func objectMeta(c *v1alpha1.NatsCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: labels(c)}
}

// podLabels are the labels of every pod: the child labels, the version, and
// the user's own (admission forbids them to override app.kubernetes.io/).
func podLabels(c *v1alpha1.NatsCluster) map[string]string {
	l := maps.Clone(c.Spec.PodTemplate.Labels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, labels(c)) // ours win, even without admission to enforce it
	l[LabelVersion] = c.Spec.Version
	return l
}

func itoa(i int) string { return strconv.Itoa(i) }
