package plan

import (
	"strings"
	"testing"
)

// TestOperatorKeys: each step of a rotation waits for the one before to
// reach every server or account. Careless variants it catches: a promote
// as soon as the next key is written (row "next key written, a server
// not restarted yet"), a drop before the accounts are signed again
// ("previous kept, an account unsigned"), a request taken while another
// is under way ("a new request while the next key ...").
func TestOperatorKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    OperatorKeysObservation
		want OperatorKeysStep
		msg  string
	}{
		{"nothing asked", OperatorKeysObservation{ServersTrust: true}, OperatorKeysStep{}, ""},
		{"a request", OperatorKeysObservation{Requested: "r1", ServersTrust: true},
			OperatorKeysStep{Begin: true, InProgress: true, Reason: OperatorKeyTrusting}, "new signing key"},
		{"next key written, a server not restarted yet", OperatorKeysObservation{Requested: "r1", Begun: "r1", Next: true},
			OperatorKeysStep{InProgress: true, Reason: OperatorKeyTrusting}, "one at a time"},
		{"next key trusted by every server", OperatorKeysObservation{Requested: "r1", Begun: "r1", Next: true, ServersTrust: true},
			OperatorKeysStep{Promote: true, InProgress: true, Reason: OperatorKeyResigning}, "signed with it"},
		{"previous kept, an account unsigned", OperatorKeysObservation{Requested: "r1", Begun: "r1", Previous: true, ServersTrust: true,
			Accounts: 3, Unsigned: []string{"a/x"}}, OperatorKeysStep{InProgress: true, Reason: OperatorKeyResigning}, "2 of 3 accounts are signed with the new signing key; waiting for a/x"},
		{"previous kept, seven unsigned", OperatorKeysObservation{Begun: "r1", Previous: true, ServersTrust: true,
			Accounts: 7, Unsigned: []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"}},
			OperatorKeysStep{InProgress: true, Reason: OperatorKeyResigning}, "a/5 and 2 more"},
		{"every account signed", OperatorKeysObservation{Requested: "r1", Begun: "r1", Previous: true, ServersTrust: true, Accounts: 3},
			OperatorKeysStep{Drop: true, InProgress: true, Reason: OperatorKeyDropping}, "no longer trusting"},
		{"no accounts at all", OperatorKeysObservation{Begun: "r1", Previous: true},
			OperatorKeysStep{Drop: true, InProgress: true, Reason: OperatorKeyDropping}, ""},
		{"dropped, servers restarting", OperatorKeysObservation{Requested: "r1", Begun: "r1"},
			OperatorKeysStep{InProgress: true, Reason: OperatorKeyDropping}, "one at a time"},
		{"done", OperatorKeysObservation{Requested: "r1", Begun: "r1", ServersTrust: true},
			OperatorKeysStep{Done: true, Reason: OperatorKeyRotated}, "no server trusts the previous"},
		{"done, the annotation removed", OperatorKeysObservation{Begun: "r1", ServersTrust: true},
			OperatorKeysStep{Done: true, Reason: OperatorKeyRotated}, ""},
		{"a new request while the next key is not trusted", OperatorKeysObservation{Requested: "r2", Begun: "r1", Next: true},
			OperatorKeysStep{InProgress: true, Reason: OperatorKeyTrusting}, ""},
		{"a new request while an account is unsigned", OperatorKeysObservation{Requested: "r2", Begun: "r1", Previous: true, Accounts: 1, Unsigned: []string{"a/x"}},
			OperatorKeysStep{InProgress: true, Reason: OperatorKeyResigning}, ""},
		{"a new request after one ended", OperatorKeysObservation{Requested: "r2", Begun: "r1", ServersTrust: true},
			OperatorKeysStep{Begin: true, InProgress: true, Reason: OperatorKeyTrusting}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OperatorKeys(tc.o)
			msg := got.Message
			got.Message = ""
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q, want it to say %q", msg, tc.msg)
			}
		})
	}
}
