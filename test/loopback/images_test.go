package loopback

import "testing"

func TestImageVersion(t *testing.T) {
	for image, want := range map[string]string{
		"nats:2.15.3-alpine": "2.15.3",
		"nats:2.14.10":       "2.14.10",
		"registry.local:5000/mirror/nats:v2.11.9-scratch": "2.11.9",
		"docker.io/library/nats:2.15.3-alpine@sha256:abc": "2.15.3",
	} {
		got, err := imageVersion(image)
		if err != nil || got != want {
			t.Errorf("imageVersion(%q) = %q, %v; want %q", image, got, err, want)
		}
	}
	for _, image := range []string{"nats", "registry.local:5000/nats", "nats:latest", "nats@sha256:abc"} {
		if got, err := imageVersion(image); err == nil {
			t.Errorf("imageVersion(%q) = %q, want an error", image, got)
		}
	}
}
