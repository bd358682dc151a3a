package main

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// operatorWritesName names the policy that confines what the operator's
// own ServiceAccount may write. RBAC grants by resource and namespace
// only: the cluster-wide install may patch every Secret, Service and
// NetworkPolicy in every namespace, so an operator steered by a tenant's
// spec (or a bug) could touch another tenant's objects. This policy holds
// every write of that identity to what kubenats makes:
//
//   - nothing in the control plane's and the mesh's namespaces;
//   - only objects carrying the managed-by label (the label on the object
//     as written, or as it was for a deletion);
//   - an update only of an object that carried the label already, its
//     controller kept: adding the label, or another owner's controller
//     reference, would take over any object in one write;
//   - selectors (Services, NetworkPolicies, PodDisruptionBudgets,
//     PeerAuthentications, PodMonitors) that name the label too, so that
//     no policy the operator writes selects pods it did not make;
//   - StatefulSets whose pods run as their cluster's own ServiceAccount
//     (named after the StatefulSet, as render names both; that it is the
//     cluster's own is service_accounts.go's policy);
//   - Ingresses that route only to their cluster's client Service;
//   - data claims (made by the StatefulSet, so without the label) only
//     grown: an update that keeps their name, labels and owners;
//   - of someone else's objects, only what a takeover of a release of the
//     official NATS chart needs: its StatefulSet deleted with its pods
//     orphaned (they are the servers the takeover replaces one at a
//     time), never with them; and its pods, Services, ConfigMap and
//     PodDisruptionBudget labelled as kubenats' (chartClaimed), each
//     still labelled as the chart's, the pods keeping their owners and
//     the others, owned by nobody before, owned by a NatsCluster after.
//
// It binds by user name, so an install under another namespace or name
// must change operatorUser (docs/security.md says so).
const operatorWritesName = "kubenats-operator-writes"

// operatorUser is the operator's ServiceAccount as config/rbac installs it
// (a test holds the two together).
const operatorUser = "system:serviceaccount:kubenats-system:kubenats"

// protectedNamespaces are never written: the control plane's and Istio's.
var protectedNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", "istio-system"}

// chartStatefulSetReleased is the one deletion of another's object a
// takeover needs: the chart's StatefulSet (its labels say so), its pods
// orphaned.
const chartStatefulSetReleased = "(request.resource.resource == 'statefulsets' && request.operation == 'DELETE'" +
	" && has(request.options) && has(request.options.propagationPolicy) && request.options.propagationPolicy == 'Orphan'" +
	" && has(oldObject.metadata.labels) && 'helm.sh/chart' in oldObject.metadata.labels && oldObject.metadata.labels['helm.sh/chart'].startsWith('nats-')" +
	" && 'app.kubernetes.io/name' in oldObject.metadata.labels && oldObject.metadata.labels['app.kubernetes.io/name'] == 'nats')"

// managedBy is true when the labels (or selector) named carry the
// managed-by label as kubenats writes it.
func managedBy(labels string) string {
	return fmt.Sprintf("(has(%[1]s) && '%[2]s' in %[1]s && %[1]s['%[2]s'] == '%[3]s')", labels, render.LabelManagedBy, render.ManagedBy)
}

// chartLabelled is true when the object o is labelled as the official
// NATS chart's.
func chartLabelled(o string) string {
	l := o + ".metadata.labels"
	return "(has(" + l + ") && 'helm.sh/chart' in " + l + " && " + l + "['helm.sh/chart'].startsWith('nats-')" +
		" && '" + render.LabelName + "' in " + l + " && " + l + "['" + render.LabelName + "'] == 'nats'" +
		" && '" + render.LabelInstance + "' in " + l + ")"
}

// ownersOf is the owner references of the object o, [] when it has none.
func ownersOf(o string) string {
	return "(has(" + o + ".metadata.ownerReferences) ? " + o + ".metadata.ownerReferences : [])"
}

// isController is true when the owner reference r is its object's
// controller.
func isController(r string) string { return "(has(" + r + ".controller) && " + r + ".controller)" }

// controllerKept is true when an update leaves the object's controller,
// if it had one, as it was: the operator never hands another owner's
// object to one of its resources.
var controllerKept = ownersOf("oldObject") + ".all(r, !" + isController("r") + " || " +
	ownersOf("object") + ".exists(n, n.uid == r.uid && " + isController("n") + "))"

// chartClaimed is the takeover's claim on a chart release's objects
// (internal/natscluster/children_takeover.go): an update of a pod, Service, ConfigMap or
// PodDisruptionBudget labelled as the chart's, which stays labelled so.
// Pods keep their owners (the chart's StatefulSet, until it lets them
// go); the others were owned by nobody and become a NatsCluster's.
var chartClaimed = "(request.operation == 'UPDATE'" +
	" && request.resource.resource in ['pods', 'services', 'configmaps', 'poddisruptionbudgets']" +
	" && " + chartLabelled("oldObject") + " && " + chartLabelled("object") +
	" && (request.resource.resource == 'pods' ? " + ownersOf("object") + " == " + ownersOf("oldObject") +
	" : (size(" + ownersOf("oldObject") + ") == 0 && " + ownersOf("object") + ".exists(r, " + isController("r") +
	" && r.kind == 'NatsCluster' && r.apiVersion.startsWith('" + v1alpha1.GroupVersion.Group + "/')))))"

// ingressSuffix is what the WebSocket Ingress's name adds to the name of
// the client Service it routes to.
func ingressSuffix() string {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	suffix, ok := strings.CutPrefix(c.WebSocketIngressName(), c.ClientServiceName())
	if !ok {
		panic("the WebSocket Ingress is no longer named after the client Service")
	}
	return suffix
}

func operatorWritesPolicy() *admissionv1.ValidatingAdmissionPolicy {
	label := render.LabelManagedBy
	selects := managedBy
	resource := "request.resource.resource"
	isDelete := "request.operation == 'DELETE'"
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: operatorWritesName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
				writes("", "configmaps", "secrets", "serviceaccounts", "services", "persistentvolumeclaims", "pods"),
				writes("apps", "statefulsets"),
				writes("policy", "poddisruptionbudgets"),
				writes("networking.k8s.io", "networkpolicies", "ingresses"),
				writes("security.istio.io", "peerauthentications"),
				writes("cert-manager.io", "certificates"),
				writes("monitoring.coreos.com", "podmonitors", "prometheusrules"),
			}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "the-operator",
				Expression: "request.userInfo.username == '" + operatorUser + "'",
			}},
			Variables: []admissionv1.Variable{
				{Name: "written", Expression: "request.operation == 'DELETE' ? oldObject : object"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression:        "!(request.namespace in " + celList(protectedNamespaces) + ")",
					MessageExpression: "'the kubenats operator writes nothing in the namespace ' + request.namespace",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: resource + " == 'persistentvolumeclaims' || " + selects("variables.written.metadata.labels") + " || " + chartStatefulSetReleased,
					MessageExpression: "'the kubenats operator writes only objects labelled " + label + "=" + render.ManagedBy +
						": ' + " + resource + " + ' ' + variables.written.metadata.name + ' is not'",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "request.operation != 'UPDATE' || " + resource + " == 'persistentvolumeclaims' || (" +
						selects("oldObject.metadata.labels") + " && " + controllerKept + ") || " + chartClaimed,
					MessageExpression: "'the kubenats operator updates only what it already manages: ' + " + resource + " + ' ' + object.metadata.name +" +
						" ' was not labelled " + label + "=" + render.ManagedBy + ", or is controlled by another owner'",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: resource + " != 'persistentvolumeclaims' || (request.operation == 'UPDATE'" +
						" && (object.metadata.name.startsWith('" + v1alpha1.DataVolumeName + "-') || object.metadata.name.startsWith('" + v1alpha1.ChartDataVolume + "-'))" +
						" && (has(object.metadata.labels) ? object.metadata.labels : {}) == (has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})" +
						" && (has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) == (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []))",
					MessageExpression: "'the kubenats operator only grows data claims: ' + variables.written.metadata.name + ' is not one, or the change is more'",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: resource + " != 'statefulsets' || " + isDelete +
						" || (has(object.spec.template.spec.serviceAccountName) && object.spec.template.spec.serviceAccountName == object.metadata.name)",
					MessageExpression: "'the kubenats operator runs servers only as the ServiceAccount of their own cluster, ' + object.metadata.name",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: resource + " != 'ingresses' || " + isDelete + " || (!has(object.spec.defaultBackend) && has(object.spec.rules)" +
						" && object.spec.rules.all(r, has(r.http) && r.http.paths.all(p, has(p.backend.service)" +
						" && p.backend.service.name + '" + ingressSuffix() + "' == object.metadata.name)))",
					MessageExpression: "'the kubenats operator routes an Ingress only to the client Service of its own cluster: ' + object.metadata.name + ' routes elsewhere'",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: isDelete + " || " + strings.Join([]string{
						"(" + resource + " == 'services' && " + selects("object.spec.selector") + ")",
						"(" + resource + " == 'networkpolicies' && " + selects("object.spec.podSelector.matchLabels") + ")",
						"(" + resource + " == 'poddisruptionbudgets' && " + selects("object.spec.selector.matchLabels") + ")",
						"(" + resource + " == 'peerauthentications' && has(object.spec.selector) && " + selects("object.spec.selector.matchLabels") + ")",
						"(" + resource + " == 'podmonitors' && " + selects("object.spec.selector.matchLabels") + ")",
						"!(" + resource + " in ['services', 'networkpolicies', 'poddisruptionbudgets', 'peerauthentications', 'podmonitors'])",
					}, " || "),
					MessageExpression: "'the kubenats operator writes only selectors that name " + label + "=" + render.ManagedBy +
						": ' + " + resource + " + ' ' + object.metadata.name + ' would select other pods'",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
}

// writes matches every write to resources of group.
func writes(group string, resources ...string) admissionv1.NamedRuleWithOperations {
	return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
		Rule: admissionv1.Rule{
			APIGroups:   []string{group},
			APIVersions: []string{"*"},
			Resources:   resources,
		},
	}}
}

func celList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "'" + s + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

func operatorWritesBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	return denyBinding(operatorWritesName)
}
