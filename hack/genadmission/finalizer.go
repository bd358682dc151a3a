package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// finalizerName names the policy that puts the JetStream finalizer on a
// new Stream, Consumer, KeyValue or ObjectStore as it is created. Without
// it the operator's first act on every resource is one more write to the
// API server, to add the finalizer, before the status write that says
// Ready: at a thousand resources that is a thousand writes and a queue
// behind them.
//
// It fails open: should the policy not run, the operator adds the
// finalizer itself, as before.
const finalizerName = "kubenats-jetstream-finalizer"

func finalizerPolicy() *admissionv1.MutatingAdmissionPolicy {
	return &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: finalizerName},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionv1.Ignore),
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{
						APIGroups:   []string{v1alpha1.GroupVersion.Group},
						APIVersions: []string{"*"},
						Resources:   []string{"streams", "consumers", "keyvalues", "objectstores"},
					},
				},
			}}},
			// An apply configuration merges: finalizers is a set, so the
			// user's own finalizers stay.
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{finalizers: ["` + v1alpha1.JetStreamFinalizer + `"]}}`,
				},
			}},
		},
	}
}

func finalizerBinding() *admissionv1.MutatingAdmissionPolicyBinding {
	return &admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: finalizerName},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: finalizerName},
	}
}
