package manager

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestBearer(t *testing.T) {
	long := make([]byte, maxBearer+1)
	for i := range long {
		long[i] = 'a'
	}
	for header, want := range map[string]string{
		"Bearer abc":             "abc",
		"bearer abc":             "abc",
		"Bearer  abc ":           "abc",
		"Basic abc":              "",
		"Bearer":                 "",
		"Bearer ":                "",
		"":                       "",
		"Bearer " + string(long): "",
	} {
		got, ok := bearer(header)
		if got != want || ok != (want != "") {
			t.Errorf("bearer(%.20q) = %q, %v; want %q", header, got, ok, want)
		}
	}
}

// TestDecisionsAreKeptForAWhileAndBounded: an allowed caller is asked about
// once a minute, a refused one every ten seconds, and no more than
// maxDecisions are kept however many tokens call. Careless variant: keeping
// every token's decision (the map grows with each caller; the bound row
// fails).
func TestDecisionsAreKeptForAWhileAndBounded(t *testing.T) {
	now := time.Unix(0, 0)
	r := &callerReview{decisions: map[decisionKey]decision{}, now: func() time.Time { return now }}
	key := func(i int) decisionKey {
		return decisionKey{token: [32]byte{byte(i), byte(i >> 8)}, verb: "get", path: "/metrics"}
	}
	r.remember(key(1), http.StatusOK)
	r.remember(key(2), http.StatusForbidden)
	now = now.Add(refusedFor)
	if _, ok := r.remembered(key(2)); ok {
		t.Error("a refusal is kept past refusedFor")
	}
	if code, ok := r.remembered(key(1)); !ok || code != http.StatusOK {
		t.Errorf("an allowed caller is not kept for allowedFor: %d, %v", code, ok)
	}
	now = now.Add(allowedFor)
	if _, ok := r.remembered(key(1)); ok {
		t.Error("an allowed caller is kept past allowedFor")
	}
	for i := range 10 * maxDecisions {
		r.remember(key(i), http.StatusOK)
		if len(r.decisions) > maxDecisions {
			t.Fatal(fmt.Sprintf("%d decisions kept, over %d", len(r.decisions), maxDecisions))
		}
	}
}
