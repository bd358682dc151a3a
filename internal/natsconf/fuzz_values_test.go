package natsconf

import (
	"encoding/json"
	"fmt"
	"math"
)

// sameValue says how a value parsed back from a rendered file differs
// from the spec's value it was written from ("" when it does not): the
// value itself, not only the key, must come back, in the types nats-server
// reads (int64 for whole numbers, float64 for the others, string, bool,
// lists and maps, each element alike).
func sameValue(spec, parsed any) string {
	switch v := spec.(type) {
	case json.Number:
		return sameNumber(v, parsed)
	case string, bool:
		if parsed != spec {
			return fmt.Sprintf("%#v came back as %#v", spec, parsed)
		}
		return ""
	case []any:
		list, ok := parsed.([]any)
		if !ok || len(list) != len(v) {
			return fmt.Sprintf("list %#v came back as %#v", spec, parsed)
		}
		for i := range v {
			if why := sameValue(v[i], list[i]); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	case map[string]any:
		m, ok := parsed.(map[string]any)
		if !ok || len(m) != len(v) {
			return fmt.Sprintf("map %#v came back as %#v", spec, parsed)
		}
		for k, want := range v {
			got, ok := m[k]
			if !ok {
				return fmt.Sprintf("key %q did not come back", k)
			}
			if why := sameValue(want, got); why != "" {
				return fmt.Sprintf("%q: %s", k, why)
			}
		}
		return ""
	}
	return fmt.Sprintf("spec value %#v of type %T has no nats.conf form", spec, spec)
}

// sameNumber: a whole number comes back as that int64; any other number
// as the float64 closest to it (a whole number written as a float, 1e3,
// may come back as either).
func sameNumber(spec json.Number, parsed any) string {
	want, err := spec.Float64()
	if err != nil {
		return fmt.Sprintf("number %s is not a float64 (%v)", spec, err)
	}
	if i, err := spec.Int64(); err == nil {
		if got, ok := parsed.(int64); ok && got == i {
			return ""
		}
	}
	switch got := parsed.(type) {
	case float64:
		if got == want {
			return ""
		}
	case int64:
		if float64(got) == want && want == math.Trunc(want) {
			return ""
		}
	}
	return fmt.Sprintf("number %s came back as %#v", spec, parsed)
}
