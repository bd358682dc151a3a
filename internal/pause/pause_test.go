package pause

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func withAnnotation(v *string) *v1alpha1.Stream {
	s := &v1alpha1.Stream{}
	if v != nil {
		s.Annotations = map[string]string{v1alpha1.AnnotationPauseReconciliation: *v, "other": "x"}
	}
	return s
}

func ptr(s string) *string { return &s }

// TestOf: only "true" pauses by annotation; the operator-wide switch pauses
// everything and names itself first, with both resumes when both hold.
// Careless variants caught: strconv.ParseBool for the value ("True", "1"
// and "t" then pause), and the annotation's reason winning over the
// switch's (the message then says removing the annotation resumes).
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		value      *string
		operator   bool
		wantReason string // "" for not paused
		resumeHint []string
	}{
		{name: "no annotation", value: nil},
		{name: "true", value: ptr("true"), wantReason: v1alpha1.ReasonReconciliationPaused, resumeHint: []string{"remove the annotation"}},
		{name: "false resumes", value: ptr("false")},
		{name: "empty resumes", value: ptr("")},
		{name: "True is not true", value: ptr("True")},
		{name: "1 is not true", value: ptr("1")},
		{name: "t is not true", value: ptr("t")},
		{name: "padded is not true", value: ptr(" true")},
		{name: "operator only", operator: true, wantReason: v1alpha1.ReasonOperatorPaused, resumeHint: []string{"without the flag"}},
		{name: "operator and annotation", value: ptr("true"), operator: true, wantReason: v1alpha1.ReasonOperatorPaused,
			resumeHint: []string{"without the flag", "remove the annotation"}},
		{name: "operator, annotation false", value: ptr("false"), operator: true, wantReason: v1alpha1.ReasonOperatorPaused,
			resumeHint: []string{"without the flag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Of(withAnnotation(tc.value), tc.operator)
			if got.Paused != (tc.wantReason != "") || got.Reason != tc.wantReason {
				t.Fatalf("Of = %+v, want paused=%v reason %q", got, tc.wantReason != "", tc.wantReason)
			}
			for _, hint := range tc.resumeHint {
				if !strings.Contains(got.Message, hint) {
					t.Errorf("message %q does not say %q", got.Message, hint)
				}
			}
			if !got.Paused && got != (State{}) {
				t.Errorf("not paused but %+v", got)
			}
		})
	}
}

// TestVerdictIsTheStatesCondition: the condition says what Of decided,
// True, under the type every controller writes.
func TestVerdictIsTheStatesCondition(t *testing.T) {
	s := Of(withAnnotation(ptr("true")), false)
	v := s.Verdict()
	if v.Type != v1alpha1.ConditionPaused || v.Status != metav1.ConditionTrue || v.Reason != s.Reason || v.Message != s.Message {
		t.Errorf("Verdict = %+v for %+v", v, s)
	}
}

// TestChangedPassesPauseAndResumeOnly: the predicate wakes a controller
// for a pause or a resume, not for another annotation or a value that
// still does not pause. Careless variant caught: comparing the raw
// values ("false" to "" would then wake every object for nothing).
func TestChangedPassesPauseAndResumeOnly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new *string
		want     bool
	}{
		{name: "paused", old: nil, new: ptr("true"), want: true},
		{name: "resumed by removal", old: ptr("true"), new: nil, want: true},
		{name: "resumed by false", old: ptr("true"), new: ptr("false"), want: true},
		{name: "still resumed", old: ptr("false"), new: nil},
		{name: "still paused", old: ptr("true"), new: ptr("true")},
		{name: "no annotation", old: nil, new: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Changed{}.Update(event.UpdateEvent{ObjectOld: withAnnotation(tc.old), ObjectNew: withAnnotation(tc.new)})
			if got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
}
