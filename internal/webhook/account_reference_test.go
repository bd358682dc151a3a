package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestDecide: only an account the API server says is missing is refused,
// and the refusal names the field and the account. Careless variants
// caught: refusing when the lookup went unanswered (an API server hiccup
// would refuse every user; the failure policy is Ignore for that reason),
// and a refusal without the field (kubectl then shows no field).
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		lookup  Lookup
		allowed bool
	}{
		{NotAsked, true}, {Found, true}, {Unanswered, true}, {Missing, false},
	} {
		r := Decide("team-a", "orders", tc.lookup)
		if r.Allowed != tc.allowed {
			t.Errorf("lookup %d: allowed %v, want %v", tc.lookup, r.Allowed, tc.allowed)
		}
		if tc.allowed {
			continue
		}
		if !strings.Contains(r.Result.Message, `spec.account: Not found: "orders"`) || !strings.Contains(r.Result.Message, "namespace team-a") {
			t.Errorf("message %q names neither the field and account nor the namespace", r.Result.Message)
		}
		if c := r.Result.Details.Causes; len(c) != 1 || c[0].Field != "spec.account" {
			t.Errorf("causes %+v, want one on spec.account", c)
		}
	}
}

// TestNeedsLookup: only a creation that names an account of the reviewed
// object's own namespace asks. Careless variants caught: looking up on
// update, which would refuse removing the finalizer of a Stream whose
// account was deleted first; looking up in the request's namespace
// whatever the object says (a forged review then asks about any
// namespace).
func TestNeedsLookup(t *testing.T) {
	in := func(ns string) reviewed { return reviewed{account: "orders", namespace: ns} }
	for _, tc := range []struct {
		op        admissionv1.Operation
		requestNS string
		object    reviewed
		want      bool
	}{
		{admissionv1.Create, "team-a", in("team-a"), true},
		{admissionv1.Create, "team-a", reviewed{namespace: "team-a"}, false},
		{admissionv1.Update, "team-a", in("team-a"), false},
		{admissionv1.Delete, "team-a", in("team-a"), false},
		{admissionv1.Create, "team-b", in("team-a"), false},
		{admissionv1.Create, "team-a", in(""), false},
		{admissionv1.Create, "", in(""), false},
	} {
		if got := needsLookup(tc.op, tc.requestNS, tc.object); got != tc.want {
			t.Errorf("%s in %q of %+v: %v, want %v", tc.op, tc.requestNS, tc.object, got, tc.want)
		}
	}
}

func TestReadReviewed(t *testing.T) {
	for raw, want := range map[string]reviewed{
		`{"metadata":{"namespace":"a"},"spec":{"account":"orders","name":"ORDERS"}}`: {account: "orders", namespace: "a"},
		`{"spec":{"name":"ORDERS"}}`: {},
		`{"metadata":{"name":"x"}}`:  {},
	} {
		got, err := readReviewed([]byte(raw))
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", raw, got, err, want)
		}
	}
	if _, err := readReviewed([]byte(`{"spec":`)); err == nil {
		t.Error("a truncated object was read")
	}
}

// TestAReviewAnswersOnlyForItsObjectsNamespace: reviews that no API
// server sends (the object in another namespace than the request's, or in
// none) get the reply of an account that exists, whether the namespace
// asked about has the account or not, and the API is never asked; a
// genuine review of a missing account is refused. Careless variant run
// (the lookup in req.Namespace whatever the object says): "a review of an
// object in team-a asking about victim was answered by a lookup in
// victim".
func TestAReviewAnswersOnlyForItsObjectsNamespace(t *testing.T) {
	reader := &recordingReader{}
	h := &AccountReferences{Reader: reader}
	review := func(requestNS, objectNS string) admission.Response {
		obj := fmt.Sprintf(`{"metadata":{"namespace":%q},"spec":{"account":"orders"}}`, objectNS)
		return h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Namespace: requestNS, Object: runtime.RawExtension{Raw: []byte(obj)},
		}})
	}
	for _, tc := range []struct{ requestNS, objectNS string }{{"victim", "team-a"}, {"team-a", "victim"}, {"victim", ""}, {"", "victim"}} {
		if r := review(tc.requestNS, tc.objectNS); !r.Allowed {
			t.Errorf("a review in %q of an object in %q was refused: %s", tc.requestNS, tc.objectNS, r.Result.Message)
		}
		if len(reader.asked) != 0 {
			t.Fatalf("a review in %q of an object in %q was answered by a lookup in %v", tc.requestNS, tc.objectNS, reader.asked)
		}
	}
	if r := review("team-a", "team-a"); r.Allowed || !slices.Equal(reader.asked, []string{"team-a/orders"}) {
		t.Errorf("a genuine review of a missing account: allowed %v, lookups %v", r.Allowed, reader.asked)
	}
}

// recordingReader has no object at all, and records what it was asked.
type recordingReader struct{ asked []string }

func (r *recordingReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	r.asked = append(r.asked, key.String())
	return apierrors.NewNotFound(schema.GroupResource{Group: "kubenats.io", Resource: "natsaccounts"}, key.Name)
}

func (r *recordingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not listed")
}
