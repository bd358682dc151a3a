package natsmon

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// FetchVersion reads one server's version from its monitor port, at url
// (/varz on the server's monitor address). The version goes into
// status.serverVersion: anything that does not look like a version
// (ValidVersion) is an error, not a value.
func FetchVersion(ctx context.Context, c *http.Client, url string) (string, error) {
	var varz struct {
		Version string `json:"version"`
	}
	if err := getJSON(ctx, c, url, maxVarzBody, &varz); err != nil {
		return "", err
	}
	if !ValidVersion(varz.Version) {
		return "", fmt.Errorf("/varz: %s is not a version", Shown(varz.Version))
	}
	return varz.Version, nil
}

// maxVersion bounds a version, as the CRD bounds spec.version.
const maxVersion = 64

// version is what nats-server versions look like: three numbers, and a
// pre-release of dot-separated letters and digits ("2.12.0-RC.3"). No
// build metadata, no spaces: a server that says anything else is not
// believed.
var version = regexp.MustCompile(`^v?[0-9]{1,5}\.[0-9]{1,5}\.[0-9]{1,5}(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// ValidVersion reports whether a server's version may be shown.
func ValidVersion(v string) bool { return len(v) <= maxVersion && version.MatchString(v) }

// Loaded is what a server's /varz tells of the configuration it runs.
type Loaded struct {
	// ServerID names the server in system account subjects.
	ServerID string
	// Metadata is server_metadata as last loaded: the operator's marks.
	Metadata map[string]string
	// CertNotAfter is the expiry of the certificate each TLS listener
	// serves ("client", "routes"), as loaded: a renewed certificate shows
	// only once the server reloaded.
	CertNotAfter map[string]time.Time
	// SinceLoad is how long ago the config was loaded or reloaded, by the
	// server's own clock (its now minus its config_load_time), so that the
	// operator's clock does not matter.
	SinceLoad time.Duration
}

// FetchLoaded reads what one server loaded from its /varz at url.
func FetchLoaded(ctx context.Context, c *http.Client, url string) (Loaded, error) {
	var varz struct {
		ID              string            `json:"server_id"`
		Metadata        map[string]string `json:"metadata"`
		Now             time.Time         `json:"now"`
		ConfigLoadTime  time.Time         `json:"config_load_time"`
		TLSCertNotAfter time.Time         `json:"tls_cert_not_after"`
		Cluster         struct {
			TLSCertNotAfter time.Time `json:"tls_cert_not_after"`
		} `json:"cluster"`
	}
	if err := getJSON(ctx, c, url, maxVarzBody, &varz); err != nil {
		return Loaded{}, err
	}
	if varz.ID == "" {
		return Loaded{}, fmt.Errorf("/varz names no server id")
	}
	certs := map[string]time.Time{}
	if !varz.TLSCertNotAfter.IsZero() {
		certs["client"] = varz.TLSCertNotAfter
	}
	if !varz.Cluster.TLSCertNotAfter.IsZero() {
		certs["routes"] = varz.Cluster.TLSCertNotAfter
	}
	return Loaded{ServerID: varz.ID, Metadata: varz.Metadata, CertNotAfter: certs, SinceLoad: max(varz.Now.Sub(varz.ConfigLoadTime), 0)}, nil
}
