package main

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
//   - selectors (Services, NetworkPolicies, PodDisruptionBudgets,
//     PeerAuthentications, PodMonitors) that name the label too, so that
//     no policy the operator writes selects pods it did not make;
//   - StatefulSets whose pods run as their cluster's own ServiceAccount
//     (named after the StatefulSet, as render names both);
//   - data claims (made by the StatefulSet, so without the label) only
//     grown: an update that keeps their name, labels and owners;
//   - one object of someone else's: the StatefulSet of a release of the
//     official NATS chart that a NatsCluster takes over, deleted with its
//     pods orphaned (they are the servers the takeover replaces one at a
//     time), never with them.
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

func operatorWritesPolicy() *admissionv1.ValidatingAdmissionPolicy {
	label := render.LabelManagedBy
	managed := fmt.Sprintf("(has(%%[1]s) && '%s' in %%[1]s && %%[1]s['%s'] == '%s')", label, label, render.ManagedBy)
	selects := func(selector string) string { return fmt.Sprintf(managed, selector) }
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
				writes("networking.k8s.io", "networkpolicies"),
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
					Expression: resource + " != 'persistentvolumeclaims' || (request.operation == 'UPDATE'" +
						" && (object.metadata.name.startsWith('" + render.DataVolumeName + "-') || object.metadata.name.startsWith('" + render.ChartDataVolume + "-'))" +
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
