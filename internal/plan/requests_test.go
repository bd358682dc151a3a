package plan

import (
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
