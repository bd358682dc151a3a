package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// takeoverName names the policy that lets a NatsCluster take over a
// release of the official NATS chart (spec.takeover) only for someone who
// could dismantle the release themselves. The takeover deletes the
// release's StatefulSet (its pods orphaned), makes its Services and
// ConfigMap the cluster's and runs the cluster's image on its claims: the
// operator does it with rights of its own, so without this whoever may
// create a NatsCluster could take a release's volumes, and the address
// its clients dial, with an image of their choice. The requester must be
// allowed to delete the StatefulSet and update both Services, by name
// (the release's are the cluster's names), as the API server's own
// authorizer answers for them. spec.takeover is set at creation and kept
// (the CRD's rule), so an edit that leaves it as it was is not asked again.
const takeoverName = "kubenats-natscluster-takeover"

func takeoverPolicy() *admissionv1.ValidatingAdmissionPolicy {
	name := "object.metadata.name"
	may := func(group, resource, verb, objectName string) string {
		return "authorizer.group('" + group + "').resource('" + resource + "')" +
			".namespace(object.metadata.namespace).name(" + objectName + ").check('" + verb + "').allowed()"
	}
	refusal := func(what string) string {
		return "'spec.takeover: taking over the release ' + object.spec.takeover.helmRelease + ' needs the rights to " + what +
			" in namespace ' + object.metadata.namespace + ', which you do not have, so kubenats will not take it over for you'"
	}
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: takeoverName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: natsClusterWrites(),
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "takes-over",
				Expression: "has(object.spec.takeover)",
			}},
			Variables: []admissionv1.Variable{
				{Name: "unchanged", Expression: "oldObject != null && has(oldObject.spec.takeover) && oldObject.spec.takeover == object.spec.takeover"},
				{Name: "mayDeleteStatefulSet", Expression: may("apps", "statefulsets", "delete", name)},
				{Name: "mayUpdateServices", Expression: may("", "services", "update", name) + " && " + may("", "services", "update", name+" + '-headless'")},
			},
			Validations: []admissionv1.Validation{
				{
					Expression:        "variables.unchanged || variables.mayDeleteStatefulSet",
					MessageExpression: refusal("delete the StatefulSet ' + " + name + " + '"),
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression:        "variables.unchanged || variables.mayUpdateServices",
					MessageExpression: refusal("update the Services ' + " + name + " + ' and ' + " + name + " + '-headless"),
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
}

func takeoverBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	return denyBinding(takeoverName)
}
