package webhook

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
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

// TestNeedsLookup: only a creation that names an account asks. Careless
// variant caught: looking up on update, which would refuse removing the
// finalizer of a Stream whose account was deleted first.
func TestNeedsLookup(t *testing.T) {
	for _, tc := range []struct {
		op      admissionv1.Operation
		account string
		want    bool
	}{
		{admissionv1.Create, "orders", true},
		{admissionv1.Create, "", false},
		{admissionv1.Update, "orders", false},
		{admissionv1.Delete, "orders", false},
	} {
		if got := needsLookup(tc.op, tc.account); got != tc.want {
			t.Errorf("%s %q: %v, want %v", tc.op, tc.account, got, tc.want)
		}
	}
}

func TestNamedAccount(t *testing.T) {
	for raw, want := range map[string]string{
		`{"spec":{"account":"orders","name":"ORDERS"}}`: "orders",
		`{"spec":{"name":"ORDERS"}}`:                    "",
		`{"metadata":{"name":"x"}}`:                     "",
	} {
		got, err := namedAccount([]byte(raw))
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := namedAccount([]byte(`{"spec":`)); err == nil {
		t.Error("a truncated object was read")
	}
}
