package testns

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNameFor(t *testing.T) {
	long := "TestAVeryLongTestNameThatGoesOnAndOn/with_a_subtest_that_goes_on_too"
	for _, tc := range []struct {
		test  string
		nanos int64
		want  string
	}{
		{"TestX", 1234567, "testx-34567"},
		{"TestX/sub_test", 5, "testx-sub-test-5"},
		// Cut at 50, and no "--" where the cut ends on a separator.
		{long, 42, "testaverylongtestnamethatgoesonandon-with-a-subtes-42"},
		{"TestAVeryLongTestNameThatGoesOnAndOnAndOnAndOnAnd/x", 7, "testaverylongtestnamethatgoesonandonandonandonand-7"},
	} {
		got := nameFor(tc.test, tc.nanos)
		if got != tc.want {
			t.Errorf("nameFor(%q, %d) = %q, want %q", tc.test, tc.nanos, got, tc.want)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("nameFor(%q) = %q, not a namespace name: %s", tc.test, got, strings.Join(errs, "; "))
		}
	}
}
