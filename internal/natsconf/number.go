package natsconf

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// formatNumber writes a numeric passthrough value. ok is false when value is
// not a number type at all.
//
// JSON decoding turns every number into float64 (or json.Number), but
// nats-server wants int64 for sizes, ports and counts, so a whole float is
// written as an integer: 1048576, never 1.048576e+06. Exponents are never
// emitted: the lexer reads "1e3" as the string "1e3", and a bare "5e" as
// 5 * 10^18 (e is its exa size suffix).
func formatNumber(value any) (text string, ok bool, err error) {
	switch v := value.(type) {
	case int:
		return strconv.Itoa(v), true, nil
	case int64:
		return strconv.FormatInt(v, 10), true, nil
	case float64:
		text, err := formatFloat(v)
		return text, true, err
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true, nil
		}
		f, err := v.Float64()
		if err != nil {
			return "", true, fmt.Errorf("invalid number %q", v.String())
		}
		text, err := formatFloat(f)
		return text, true, err
	}
	return "", false, nil
}

// formatFloat writes f as an integer when it is whole, otherwise as a plain
// decimal, which the lexer reads as a float.
func formatFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %v has no nats.conf form", f)
	}
	if f == math.Trunc(f) {
		// float64(math.MaxInt64) rounds up to 2^63, hence >= on the upper bound.
		if f < math.MinInt64 || f >= math.MaxInt64 {
			return "", fmt.Errorf("number %v does not fit nats-server's 64-bit integers", f)
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}
