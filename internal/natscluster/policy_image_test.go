package natscluster

import (
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestImagePolicyMatchesOnRegistryBoundaries: an allowed prefix allows the
// images under it and nothing that merely starts with the same letters.
// Careless variants caught: a plain strings.HasPrefix on the image as
// written (docker.io/nats would allow docker.io.evil.com/nats and
// docker.io/natsx, and would refuse nats:2.15, which is the same image),
// and a match that skips parsing the reference (an image with ".." or
// spaces in it, which no registry serves under the allowed prefix).
func TestImagePolicyMatchesOnRegistryBoundaries(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		image   string
		want    bool
	}{
		// No policy: any image.
		{nil, "evil.example.com/anything:1", true},
		{[]string{"", " "}, "evil.example.com/anything:1", true},

		{[]string{"docker.io/nats"}, "nats:2.15.3-alpine", true},
		{[]string{"docker.io/nats"}, "docker.io/nats:2.15.3", true},
		{[]string{"docker.io/nats"}, "docker.io/library/nats:2.15.3", true},
		{[]string{"docker.io/nats"}, "index.docker.io/library/nats:2.15.3", true},
		{[]string{"docker.io/nats"}, "nats@sha256:" + strings.Repeat("a", 64), true},
		{[]string{"docker.io/nats"}, "docker.io.evil.com/nats:2.15.3", false},
		{[]string{"docker.io/nats"}, "docker.io.evil.com/library/nats:2.15.3", false},
		{[]string{"docker.io/nats"}, "docker.io/natsx:2.15.3", false},
		{[]string{"docker.io/nats"}, "natsx:2.15.3", false},
		{[]string{"docker.io/nats"}, "docker.io/evil/nats:2.15.3", false},
		{[]string{"docker.io/nats"}, "evil.com/docker.io/nats:1", false},

		{[]string{"registry.example.com"}, "registry.example.com/team/nats:1", true},
		{[]string{"registry.example.com"}, "REGISTRY.example.com/team/nats:1", true},
		{[]string{"registry.example.com"}, "registry.example.com:5000/team/nats:1", false},
		{[]string{"registry.example.com"}, "registry.example.com.evil.com/nats:1", false},
		{[]string{"registry.example.com"}, "registry.example.company/nats:1", false},
		{[]string{"registry.example.com/"}, "registry.example.com/nats:1", true},
		{[]string{"localhost:5000"}, "localhost:5000/nats:1", true},
		{[]string{"localhost:5000"}, "localhost:50001/nats:1", false},
		{[]string{"ghcr.io/nats-io"}, "ghcr.io/nats-io/nats-server:2.15", true},
		{[]string{"ghcr.io/nats-io"}, "ghcr.io/nats-io-evil/nats-server:2.15", false},
		{[]string{"ghcr.io/nats-io", "docker.io/nats"}, "nats:2.15", true},

		// A one-component image is a Docker Hub repository, even when it
		// looks like a host.
		{[]string{"registry.example.com"}, "registry.example.com:1", false},

		// What is not an image reference is never allowed.
		{[]string{"registry.example.com"}, "registry.example.com/../evil/nats:1", false},
		{[]string{"registry.example.com"}, "registry.example.com//nats:1", false},
		{[]string{"registry.example.com"}, "registry.example.com/Team/nats:1", false},
		{[]string{"registry.example.com"}, "registry.example.com/nats:1 --privileged", false},
		{[]string{"registry.example.com"}, "registry.example.com/nats@sha256:short", false},
		{[]string{"registry.example.com"}, "", false},
	} {
		p, err := ParseImagePolicy(tc.allowed)
		if err != nil {
			t.Fatalf("ParseImagePolicy(%q): %v", tc.allowed, err)
		}
		if got := p.Allows(tc.image); got != tc.want {
			t.Errorf("allowed %q, image %q: Allows = %v, want %v", tc.allowed, tc.image, got, tc.want)
		}
	}
}

func TestParseImagePolicyRefusesWhatIsNoRegistry(t *testing.T) {
	for _, entry := range []string{"docker.io/Nats", "https://registry.example.com", "registry.example.com/../x", "a b", "-bad.example.com"} {
		if _, err := ParseImagePolicy([]string{entry}); err == nil {
			t.Errorf("ParseImagePolicy(%q) accepted it", entry)
		}
	}
}

// TestImagePolicyRefusesOnlyTheTenantsImage: the refusal is a fatal
// blocker naming the image and what is allowed; the official image the
// operator picks when spec.image is empty always runs.
func TestImagePolicyRefusesOnlyTheTenantsImage(t *testing.T) {
	p, err := ParseImagePolicy([]string{"registry.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	c := &v1alpha1.NatsCluster{}
	if b := p.refusal(c); b != nil {
		t.Errorf("the default image is refused: %+v", b)
	}
	c.Spec.Image = "docker.io.evil.com/nats:2.15.3"
	b := p.refusal(c)
	if b == nil || !b.Fatal || b.Reason != ReasonImageNotAllowed || !strings.Contains(b.Message, c.Spec.Image) || !strings.Contains(b.Message, "registry.example.com") {
		t.Errorf("refusal %+v", b)
	}
	c.Spec.Image = "registry.example.com/nats:2.15.3"
	if b := p.refusal(c); b != nil {
		t.Errorf("an allowed image is refused: %+v", b)
	}
}
