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

func TestExecutableIn(t *testing.T) {
	for _, tc := range []struct {
		image, command string
		ok             bool
	}{
		{"nats:2.15.3-alpine", "nats-server", true},
		{"nats:2.15.3-alpine", "/usr/local/bin/nats-server", true},
		{"nats:2.15.3-alpine", "/nats-server", false},
		{"nats:2.15.3", "/nats-server", true},
		{"nats:2.15.3", "/usr/local/bin/nats-server", false},
		{"registry:5000/nats:2.15.3-scratch", "/nats-server", true},
		{"nats:2.15.3-alpine", "/usr/bin/nats-server", false},
		{"nats:2.15.3-alpine", "nats", false},
		{"nats:2.15.3-alpine", "sh", false},
	} {
		if err := executableIn(tc.image, tc.command); (err == nil) != tc.ok {
			t.Errorf("executableIn(%q, %q) = %v, want ok=%v", tc.image, tc.command, err, tc.ok)
		}
	}
}
