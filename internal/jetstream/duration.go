package jetstream

import (
	"fmt"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// parseDuration reads a spec duration. The empty string is 0, so a field
// cleared in the spec reaches the server as 0 rather than being left out.
// field is the path named in the error, such as "spec.ackWait".
func parseDuration(field string, d v1alpha1.Duration) (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration such as 30s, 5m or 1h30m", field, string(d))
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: %q must not be negative", field, string(d))
	}
	return v, nil
}

// formatDuration writes a server duration for the spec: 0 is the empty
// string (the field is unset), anything else is time.Duration.String(), so
// 2m becomes "2m0s". Compare durations parsed, never as strings: the CRD
// defaults "2m" and "30s" are the same values as "2m0s" and "30s".
func formatDuration(d time.Duration) v1alpha1.Duration {
	if d == 0 {
		return ""
	}
	return v1alpha1.Duration(d.String())
}

// formatDefaultedDuration is formatDuration for a field whose empty spec
// value means a non-zero default (ackWait, duplicateWindow): a 0 on the
// server is written as "0s" so that it reads back as 0, not as the default.
func formatDefaultedDuration(d time.Duration) v1alpha1.Duration {
	if d == 0 {
		return "0s"
	}
	return v1alpha1.Duration(d.String())
}
