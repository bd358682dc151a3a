package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// serviceAccountsName names the policy that runs a cluster's servers only
// as the ServiceAccount the operator made for that cluster. A pod may run
// as any ServiceAccount of its namespace, with whatever that account's
// bindings grant (and, on some platforms, its security constraints): the
// operator, which creates StatefulSets with its own rights, must not give
// pods one that a tenant could not run pods as. A rule on names alone
// (the ServiceAccount named as the StatefulSet, as render names both) is
// met by a NatsCluster named after a privileged ServiceAccount: the policy
// also looks at the ServiceAccount itself (operator_writes.go keeps the
// rule on names, which holds also where no ServiceAccount exists).
//
// A policy's expressions see one object; its params are how it reads
// others. The params are the ServiceAccounts of the StatefulSet's
// namespace, each evaluated in turn (the verdicts ANDed): the one named
// must be labelled as kubenats' and controlled by the StatefulSet's own
// controller (its NatsCluster, by UID). One that does not exist passes
// here and is refused by the API server's ServiceAccount admission when a
// pod names it.
const serviceAccountsName = "kubenats-operator-service-accounts"

func serviceAccountsPolicy() *admissionv1.ValidatingAdmissionPolicy {
	sa := "(has(object.spec.template.spec.serviceAccountName) ? object.spec.template.spec.serviceAccountName : 'default')"
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccountsName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			ParamKind:     &admissionv1.ParamKind{APIVersion: "v1", Kind: "ServiceAccount"},
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Resources: []string{"statefulsets"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "the-operator",
				Expression: "request.userInfo.username == '" + operatorUser + "'",
			}},
			Variables: []admissionv1.Variable{
				{Name: "controllers", Expression: ownersOf("object") + ".filter(r, " + isController("r") + " && r.kind == 'NatsCluster').map(r, r.uid)"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression: "params.metadata.name != " + sa + " || (" + managedBy("params.metadata.labels") +
						" && size(variables.controllers) == 1 && " + ownersOf("params") + ".exists(r, " + isController("r") + " && r.uid == variables.controllers[0]))",
					MessageExpression: "'the kubenats operator runs servers only as the ServiceAccount it made for their cluster: ' + params.metadata.name + ' is not that one'",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
}

// serviceAccountsBinding evaluates the policy against every
// ServiceAccount of the StatefulSet's namespace (paramRef's namespace
// left out: the request's). A namespace without any has none a pod
// could run as.
func serviceAccountsBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	b := denyBinding(serviceAccountsName)
	b.Spec.ParamRef = &admissionv1.ParamRef{
		Selector:                &metav1.LabelSelector{},
		ParameterNotFoundAction: ptr.To(admissionv1.AllowAction),
	}
	return b
}
