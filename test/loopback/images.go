package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// leadingVersion is the version an image tag starts with: "2.15.3" in
// nats:2.15.3-alpine, "2.14.10" in registry:5000/nats:v2.14.10-scratch.
var leadingVersion = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+)`)

// imageVersion is the nats-server version an image runs, read from its tag.
func imageVersion(image string) (string, error) {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i] // a digest names no version
	}
	// The tag follows the last colon after the last slash; a colon before
	// the last slash is a registry's port.
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return "", fmt.Errorf("image %q has no tag: the loopback kubelet picks the nats-server binary by the version the tag starts with", image)
	}
	m := leadingVersion.FindStringSubmatch(ref[colon+1:])
	if m == nil {
		return "", fmt.Errorf("the tag of image %q does not start with a version", image)
	}
	return m[1], nil
}

// binaryFor is the nats-server binary built for image's version by
// hack/build-nats-servers.sh under dir.
func binaryFor(dir, image string) (path, version string, err error) {
	version, err = imageVersion(image)
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, version, "nats-server")
	if _, err := os.Stat(path); err != nil {
		return "", version, fmt.Errorf("no nats-server %s for image %q at %s: run hack/build-nats-servers.sh %s", version, image, path, version)
	}
	return path, version, nil
}

// executableIn says whether command, the first word of a container's
// command or exec hook, names the image's nats-server as the container
// runtime would find it: by PATH (both official images have nats-server on
// it), or at the path the image has it, /usr/local/bin/nats-server in the
// alpine variants, /nats-server in the scratch ones. Anything else does not
// exist in the image; the error is the runtime's.
func executableIn(image, command string) error {
	if command == "nats-server" {
		return nil
	}
	at := "/nats-server"
	if strings.Contains(image[strings.LastIndex(image, ":")+1:], "alpine") {
		at = "/usr/local/bin/nats-server"
	}
	if command == at {
		return nil
	}
	if strings.Contains(command, "/") {
		return fmt.Errorf("exec: %q: stat %s: no such file or directory", command, command)
	}
	return fmt.Errorf("exec: %q: executable file not found in $PATH", command)
}
