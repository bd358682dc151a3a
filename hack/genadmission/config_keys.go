package main

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/internal/natsconf"
)

// configKeysName names the policy that refuses NatsCluster passthrough keys
// the operator owns. CEL rules on the CRD itself cannot see spec.config
// (its values are free-form, so the API server gives CEL no type for it);
// a policy sees the object as it is. The key list comes from natsconf, the
// package that owns those keys, so the two cannot drift.
const configKeysName = "kubenats-natscluster-config-keys"

func configKeysPolicy() *admissionv1.ValidatingAdmissionPolicy {
	quoted := make([]string, 0, len(natsconf.OwnedKeys()))
	for _, k := range natsconf.OwnedKeys() {
		quoted = append(quoted, "'"+k+"'")
	}
	owned := "[" + strings.Join(quoted, ", ") + "]"
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: configKeysName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule: admissionv1.Rule{
						APIGroups:   []string{"kubenats.io"},
						APIVersions: []string{"*"},
						Resources:   []string{"natsclusters"},
					},
				},
			}}},
			Variables: []admissionv1.Variable{{
				Name:       "owned",
				Expression: "!has(object.spec) || !has(object.spec.config) ? [] : object.spec.config.filter(k, k.lowerAscii() in " + owned + ")",
			}},
			Validations: []admissionv1.Validation{{
				Expression: "size(variables.owned) == 0",
				MessageExpression: "'spec.config.' + variables.owned[0] + ' is owned by the operator: " +
					"use the dedicated spec field (ports, listeners, server_name, pid_file, lame duck, cluster, jetstream, authorization and accounts are set by kubenats)'",
				Reason: ptr.To(metav1.StatusReasonInvalid),
			}},
		},
	}
}

func configKeysBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: configKeysName},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        configKeysName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}
