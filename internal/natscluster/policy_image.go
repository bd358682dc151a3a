package natscluster

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// ReasonImageNotAllowed: spec.image names a registry the operator's
// --allowed-image-registries does not list.
const ReasonImageNotAllowed = "ImageNotAllowed"

// The pods run spec.image, and whatever that image is reads everything the
// pods mount and answers every request the operator makes of it. An
// operator may limit it to registries it trusts (ImagePolicy). The official
// image the operator picks itself when spec.image is empty is always
// allowed: it is not the tenant's choice.

// ImagePolicy limits spec.image to images under one of its prefixes; the
// zero value allows any image.
type ImagePolicy struct {
	// prefixes are normalized repositories (registry host, then path
	// components), as ParseImagePolicy made them.
	prefixes []string
}

// ParseImagePolicy reads the allowed prefixes, each written as an image
// name without tag: a registry host ("registry.example.com",
// "localhost:5000"), optionally with a path ("ghcr.io/nats-io",
// "docker.io/nats"). A name with no registry host means Docker Hub, as it
// does for an image ("nats" is docker.io/library/nats). Blank entries are
// ignored; none leaves every image allowed.
func ParseImagePolicy(entries []string) (ImagePolicy, error) {
	var p ImagePolicy
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		repo, ok := normalizeRepository(strings.TrimSuffix(e, "/"), true)
		if !ok {
			return ImagePolicy{}, fmt.Errorf("allowed image registry %q: not a registry host or repository (write it as an image name without tag)", e)
		}
		p.prefixes = append(p.prefixes, repo)
	}
	return p, nil
}

// Allows reports whether the image may run: its repository is one of the
// prefixes or below one, on a path boundary. "docker.io/nats" allows
// "nats:2.15" and "docker.io/library/nats@sha256:...", never
// "docker.io.evil.com/nats" nor "docker.io/natsx". An image that does not
// parse as an image reference is never allowed.
func (p ImagePolicy) Allows(image string) bool {
	if len(p.prefixes) == 0 {
		return true
	}
	repo, ok := imageRepository(image)
	if !ok {
		return false
	}
	for _, prefix := range p.prefixes {
		if repo == prefix || strings.HasPrefix(repo, prefix+"/") {
			return true
		}
	}
	return false
}

// String lists the prefixes, for messages.
func (p ImagePolicy) String() string { return strings.Join(p.prefixes, ", ") }

// refusal is the blocker for c's spec.image under p, or nil.
func (p ImagePolicy) refusal(c *v1alpha1.NatsCluster) *status.Blocker {
	if c.Spec.Image == "" || p.Allows(c.Spec.Image) {
		return nil
	}
	return &status.Blocker{Reason: ReasonImageNotAllowed, Fatal: true, Message: fmt.Sprintf(
		"spec.image %q is not under a registry this operator allows (%s); ask the cluster admin, or leave spec.image empty for the official image",
		c.Spec.Image, p)}
}

// The reference grammar of container images (distribution's reference
// package), in the parts that matter here: a registry host is a DNS name
// or IPv4 address with an optional port, and is told apart from a first
// path component by a '.' or ':' in it, or by being "localhost".
var (
	hostPart = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]{1,5})?$`)
	pathPart = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	tagPart  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digest   = regexp.MustCompile(`^[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$`)
)

// imageRepository is the normalized repository of an image reference: its
// tag and digest dropped, Docker Hub's implicit host and library/ made
// explicit, the host in lower case. ok is false for what is not an image
// reference.
func imageRepository(image string) (string, bool) {
	name := image
	if at := strings.IndexByte(name, '@'); at >= 0 {
		if !digest.MatchString(name[at+1:]) {
			return "", false
		}
		name = name[:at]
	}
	if colon := strings.LastIndexByte(name, ':'); colon > strings.LastIndexByte(name, '/') {
		if !tagPart.MatchString(name[colon+1:]) {
			return "", false
		}
		name = name[:colon]
	}
	return normalizeRepository(name, false)
}

// normalizeRepository normalizes a repository name (no tag, no digest).
// bareHost lets a name of one component that looks like a host stand for
// the whole registry, as an allow-list entry may; in an image, one
// component is always a Docker Hub repository, as container runtimes read
// it.
func normalizeRepository(name string, bareHost bool) (string, bool) {
	if name == "" || len(name) > 255 {
		return "", false
	}
	parts := strings.Split(name, "/")
	host := "docker.io"
	if first := parts[0]; len(parts) > 1 && (strings.ContainsAny(first, ".:") || first == "localhost") {
		if !hostPart.MatchString(first) {
			return "", false
		}
		host, parts = strings.ToLower(first), parts[1:]
	} else if bareHost && len(parts) == 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") && hostPart.MatchString(parts[0]) {
		// A bare host, as an allow-list entry names a whole registry.
		return strings.ToLower(parts[0]), true
	}
	if host == "index.docker.io" {
		host = "docker.io"
	}
	for _, part := range parts {
		if !pathPart.MatchString(part) {
			return "", false
		}
	}
	if host == "docker.io" && len(parts) == 1 {
		parts = append([]string{"library"}, parts...)
	}
	return host + "/" + strings.Join(parts, "/"), true
}
