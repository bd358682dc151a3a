package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// publishingName names the policy that lets a NatsCluster publish its
// client Service beyond the cluster network (type NodePort or
// LoadBalancer) or annotate it only for someone who could make such a
// Service themselves, and its WebSocket Ingress only for someone who could
// make an Ingress. The operator writes the Service with its own rights,
// which reach every namespace; without this, whoever may create a
// NatsCluster could have the operator open a load balancer, or hand an
// annotation to a controller that reads Service annotations (external DNS
// names, an internet-facing load balancer, a cloud firewall), that their
// own RBAC keeps from them. The check is the API server's own authorizer,
// asked for the requester, so it follows the RBAC the cluster has.
const publishingName = "kubenats-natscluster-publishing"

// hasIngress is true when the NatsCluster o asks for a WebSocket Ingress.
func hasIngress(o string) string {
	return "(has(" + o + ".spec.websocket) && has(" + o + ".spec.websocket.ingress))"
}

// publishes is true when the NatsCluster o asks for more than a plain
// ClusterIP Service.
func publishes(o string) string {
	return "(has(" + o + ".spec.service) && (" +
		"(has(" + o + ".spec.service.type) && " + o + ".spec.service.type != 'ClusterIP') || " +
		"(has(" + o + ".spec.service.annotations) && size(" + o + ".spec.service.annotations) > 0)))"
}

func publishingPolicy() *admissionv1.ValidatingAdmissionPolicy {
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: publishingName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: natsClusterWrites(),
			Variables: []admissionv1.Variable{
				{Name: "publishes", Expression: publishes("object")},
				// An edit that leaves spec.service as it was asks for
				// nothing new: whoever set it was checked then.
				{Name: "unchanged", Expression: "oldObject != null && " + publishes("oldObject") +
					" && oldObject.spec.service == object.spec.service"},
				{Name: "mayCreateServices", Expression: "authorizer.group('').resource('services')" +
					".namespace(object.metadata.namespace).check('create').allowed()"},
				// The Ingress likewise: asked for, and not as it was.
				{Name: "newIngress", Expression: hasIngress("object") + " && (oldObject == null || !" + hasIngress("oldObject") +
					" || oldObject.spec.websocket.ingress != object.spec.websocket.ingress)"},
				{Name: "mayCreateIngresses", Expression: "authorizer.group('networking.k8s.io').resource('ingresses')" +
					".namespace(object.metadata.namespace).check('create').allowed()"},
			},
			Validations: []admissionv1.Validation{{
				Expression: "!variables.publishes || variables.unchanged || variables.mayCreateServices",
				MessageExpression: "'spec.service: a type other than ClusterIP, or Service annotations, publish the cluster as a Service of your own would; " +
					"you may not create Services in namespace ' + object.metadata.namespace + ', so kubenats will not create this one for you'",
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}, {
				Expression: "!variables.newIngress || variables.mayCreateIngresses",
				MessageExpression: "'spec.websocket.ingress publishes the cluster as an Ingress of your own would; " +
					"you may not create Ingresses in namespace ' + object.metadata.namespace + ', so kubenats will not create this one for you'",
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}

func publishingBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	return denyBinding(publishingName)
}
