package loopback

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"POD_NAME": "nats-0", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		`"$(POD_NAME)"`:           `"nats-0"`,
		"$(POD_NAME).$(POD_NAME)": "nats-0.nats-0",
		"$(MISSING)":              "$(MISSING)",
		"$(EMPTY)x":               "x",
		"$$(POD_NAME)":            "$(POD_NAME)",
		"$$$(POD_NAME)":           "$nats-0",
		"$NATS_PASSWORD":          "$NATS_PASSWORD",
		"cost $":                  "cost $",
		"$(POD_NAME":              "$(POD_NAME",
		"plain":                   "plain",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
