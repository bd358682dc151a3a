package manager

import (
	"strings"
	"testing"
)

// TestCheckWebhook: a webhook the operator could not serve is refused at
// start with what to change, never started to fail every review.
func TestCheckWebhook(t *testing.T) {
	on := func(edit func(*Options)) Options {
		o := Options{WebhookBindAddress: ":9443", Namespace: "kubenats-system", WebhookCertNames: []string{"kubenats-webhook.kubenats-system.svc"}}
		edit(&o)
		return o
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"off", Options{WebhookBindAddress: "0"}, ""},
		{"off by default", Options{}, ""},
		{"on", on(func(*Options) {}), ""},
		{"no namespace", on(func(o *Options) { o.Namespace = "" }), "--namespace"},
		{"no names", on(func(o *Options) { o.WebhookCertNames = nil }), "--webhook-cert-names"},
		{"its namespace not watched", on(func(o *Options) { o.WatchNamespaces = []string{"team-a"} }), "--watch-namespaces"},
		{"its namespace watched", on(func(o *Options) { o.WatchNamespaces = []string{"team-a", "kubenats-system"} }), ""},
	} {
		err := checkWebhook(tc.o)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
