package plan

import (
	"errors"
	"strings"
	"testing"
)

func TestRequests(t *testing.T) {
	servers := []string{"nats-0", "nats-1", "nats-2"}
	for _, tc := range []struct {
		name    string
		req     UserRequest
		servers []string
		want    string // "" nothing, "do", or part of the refusal
	}{
		{"no annotation", UserRequest{Kind: RequestStepDown}, servers, ""},
		// Careless: a request carried out on every pass (no record).
		{"carried already", UserRequest{Kind: RequestStepDown, Value: "x", Carried: "x"}, servers, ""},
		{"a new step-down", UserRequest{Kind: RequestStepDown, Value: "2026-12-07T00:00:00Z", Carried: "old"}, servers, "do"},
		{"a step-down preferring a server", UserRequest{Kind: RequestStepDown, Value: "nats-2@t", Target: "nats-2"}, servers, "do"},
		{"preferring a stranger", UserRequest{Kind: RequestStepDown, Value: "other-0@t", Target: "other-0"}, servers, "not a server"},
		{"an evacuation", UserRequest{Kind: RequestEvacuate, Value: "nats-1@t", Target: "nats-1"}, servers, "do"},
		{"the same server again, a new time", UserRequest{Kind: RequestEvacuate, Value: "nats-1@u", Carried: "nats-1@t", Target: "nats-1"}, servers, "do"},
		{"an evacuation of nothing", UserRequest{Kind: RequestEvacuate, Value: "@t"}, servers, "names the server"},
		{"one server", UserRequest{Kind: RequestEvacuate, Value: "nats-0", Target: "nats-0"}, []string{"nats-0"}, "single server"},
	} {
		steps := Requests([]UserRequest{tc.req}, tc.servers)
		got := ""
		if len(steps) == 1 {
			got = "do"
			if steps[0].Refused != "" {
				got = steps[0].Refused
			}
		}
		if (tc.want == "do" || tc.want == "") && got != tc.want || tc.want != "do" && tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A request the servers never took is tried again; one they took and
// could not finish is not sent again. Careless variants, run: every
// failure retried (an evacuation with nowhere to go is sent on every
// pass); every failure recorded (a request to a server that did not
// answer is lost).
func TestRequestOutcome(t *testing.T) {
	failed := errors.New("failed")
	for _, tc := range []struct {
		name  string
		step  RequestStep
		taken bool
		err   error
		want  RequestOutcome
	}{
		{"carried out", RequestStep{}, true, nil, RequestDone},
		{"refused", RequestStep{Refused: "not a server"}, false, nil, RequestDone},
		{"no answer", RequestStep{}, false, failed, RequestRetry},
		{"taken, not carried through", RequestStep{}, true, failed, RequestFailedOnce},
	} {
		if got := tc.step.Outcome(tc.taken, tc.err); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
