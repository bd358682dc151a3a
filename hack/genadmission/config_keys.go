package main

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/internal/natsconf"
)

// configKeysName names the policy that holds NatsCluster passthrough keys
// to the allow-list. CEL rules on the CRD itself cannot see spec.config
// (its values are free-form, so the API server gives CEL no type for it);
// a policy sees the object as it is. The list and the folding come from
// natsconf, which the operator checks with too, so the two cannot drift:
// lowerAscii here is natsconf.FoldKey there.
const configKeysName = "kubenats-natscluster-config-keys"

func configKeysPolicy() *admissionv1.ValidatingAdmissionPolicy {
	keys := natsconf.PassthroughKeys()
	quoted := make([]string, 0, len(keys))
	for _, k := range keys {
		quoted = append(quoted, "'"+k+"'")
	}
	allowed := "[" + strings.Join(quoted, ", ") + "]"
	config := "(!has(object.spec) || !has(object.spec.config) ? {} : object.spec.config)"
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: configKeysName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: natsClusterWrites(),
			Variables: []admissionv1.Variable{
				{Name: "keys", Expression: config + ".map(k, k)"},
				{Name: "refused", Expression: "variables.keys.filter(k, !(k.lowerAscii() in " + allowed + "))"},
				{Name: "twins", Expression: "variables.keys.filter(k, variables.keys.filter(j, j.lowerAscii() == k.lowerAscii()).size() > 1)"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression: "size(variables.refused) == 0",
					MessageExpression: "'spec.config.' + variables.refused[0] + ' is not an allowed passthrough setting. " +
						"spec.config accepts only " + strings.Join(keys, ", ") + ": " +
						"kubenats sets listeners, names, clustering, JetStream and authentication itself, " +
						"and settings that take a path, open a listener or change who may connect wait for typed fields'",
					Reason: ptr.To(metav1.StatusReasonInvalid),
				},
				{
					Expression: "size(variables.twins) == 0",
					MessageExpression: "'spec.config.' + variables.twins[0] + ' and spec.config.' + variables.twins[1] + " +
						"' name the same nats-server setting: it ignores letter case in top-level keys'",
					Reason: ptr.To(metav1.StatusReasonInvalid),
				},
			},
		},
	}
}

func configKeysBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	return denyBinding(configKeysName)
}
