package jsonread

import (
	"strings"
	"testing"
)

// TestFloatAndIntKeepTheirGrammar: a fraction reads as a float and is
// refused as an integer; text that is not a JSON number is refused by
// both. Careless variant watched failing: the number's JSON grammar check
// dropped (validNumber), which lets "01" through as 1.
func TestFloatAndIntKeepTheirGrammar(t *testing.T) {
	for _, tc := range []struct {
		in       string
		float    float64
		floatOK  bool
		intOK    bool
		intValue int64
	}{
		{"1.5", 1.5, true, false, 0},
		{"42", 42, true, true, 42},
		{"-3e2", -300, true, false, 0},
		{"null", 0, true, true, 0},
		{"1e", 0, false, false, 0},
		{"01", 0, false, false, 0},
	} {
		f, err := New(strings.NewReader(tc.in), "test").Float()
		if (err == nil) != tc.floatOK || (err == nil && f != tc.float) {
			t.Errorf("Float(%s) = %v, %v", tc.in, f, err)
		}
		n, err := New(strings.NewReader(tc.in), "test").Int()
		if (err == nil) != tc.intOK || (err == nil && n != tc.intValue) {
			t.Errorf("Int(%s) = %v, %v", tc.in, n, err)
		}
	}
}

// TestNestingIsBounded: a body of nested brackets is refused at MaxDepth,
// skipped or kept.
func TestNestingIsBounded(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if err := New(strings.NewReader(deep), "test").Skip(); err == nil || !strings.Contains(err.Error(), "nests deeper") {
		t.Fatalf("skipped %d levels: %v", maxDepth+1, err)
	}
	ok := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if err := New(strings.NewReader(ok), "test").Skip(); err != nil {
		t.Fatalf("%d levels: %v", maxDepth, err)
	}
}
