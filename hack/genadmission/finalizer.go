package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The policies that put kubenats' finalizers on new objects as they are
// created. Without them the operator's first act on each object is one
// more write to the API server, to add its finalizer: at a thousand
// JetStream resources a thousand writes and a queue behind them, and on a
// NatsCluster or NatsAccount a write racing the user's own first edit (a
// conflict where the user expected a verdict).
//
// They fail open: should a policy not run, the operator adds the
// finalizer itself, as before.
const (
	finalizerName      = "kubenats-jetstream-finalizer"
	guardFinalizerName = "kubenats-deletion-guard"
	accountFinalizer   = "kubenats-account-finalizer"
)

// finalizerPolicies are the three policies and their bindings: the
// JetStream finalizer on Streams, Consumers, KeyValues and ObjectStores,
// the deletion guard on NatsClusters, the account's on NatsAccounts.
// (A NatsUser gets its finalizer when its creds are first issued: until
// then there is nothing to revoke.)
func finalizerPolicies() []runtime.Object {
	var out []runtime.Object
	for _, p := range []struct {
		name, finalizer string
		resources       []string
	}{
		{finalizerName, v1alpha1.JetStreamFinalizer, []string{"streams", "consumers", "keyvalues", "objectstores"}},
		{guardFinalizerName, v1alpha1.DeletionGuardFinalizer, []string{"natsclusters"}},
		{accountFinalizer, v1alpha1.AccountFinalizer, []string{"natsaccounts"}},
	} {
		out = append(out, finalizerPolicy(p.name, p.finalizer, p.resources), finalizerBinding(p.name))
	}
	return out
}

func finalizerPolicy(name, finalizer string, resources []string) *admissionv1.MutatingAdmissionPolicy {
	return &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionv1.Ignore),
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{
						APIGroups:   []string{v1alpha1.GroupVersion.Group},
						APIVersions: []string{"*"},
						Resources:   resources,
					},
				},
			}}},
			// An apply configuration merges: finalizers is a set, so the
			// user's own finalizers stay.
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{finalizers: ["` + finalizer + `"]}}`,
				},
			}},
		},
	}
}

func finalizerBinding(name string) *admissionv1.MutatingAdmissionPolicyBinding {
	return &admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
}
