package natsmon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
)

// FetchVersion reads one server's version from its monitor port, at url
// (/varz on the server's monitor address). The version goes into
// status.serverVersion: anything that does not look like a version
// (ValidVersion) is an error, not a value.
func FetchVersion(ctx context.Context, c *http.Client, url string) (string, error) {
	var v string
	err := getJSON(ctx, c, url, maxVarzBody, func(r io.Reader) error {
		d := newJSONReader(r, "/varz")
		if err := d.Object(func(key []byte) error {
			if string(key) != "version" {
				return d.Skip()
			}
			var err error
			v, err = d.String("version")
			return err
		}); err != nil {
			return err
		}
		return d.End()
	})
	if err != nil {
		return "", err
	}
	if !ValidVersion(v) {
		return "", fmt.Errorf("/varz: %s is not a version", Shown(v))
	}
	return v, nil
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
	var l Loaded
	err := getJSON(ctx, c, url, maxVarzBody, func(r io.Reader) error {
		var err error
		l, err = decodeLoaded(r)
		return err
	})
	return l, err
}

// decodeLoaded reads the part of a /varz document that Loaded holds.
func decodeLoaded(r io.Reader) (Loaded, error) {
	d := newJSONReader(r, "/varz")
	var now, loaded, clientCert, routeCert, gatewayCert, leafCert time.Time
	l := Loaded{Metadata: map[string]string{}, CertNotAfter: map[string]time.Time{}}
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "server_id":
			l.ServerID, err = d.String("server id")
		case "metadata":
			err = d.metadata(l.Metadata)
		case "now":
			now, err = d.Time("time")
		case "config_load_time":
			loaded, err = d.Time("config load time")
		case "tls_cert_not_after":
			clientCert, err = d.Time("certificate expiry")
		case "cluster":
			err = d.Object(func(key []byte) error {
				if string(key) != "tls_cert_not_after" {
					return d.Skip()
				}
				var err error
				routeCert, err = d.Time("certificate expiry")
				return err
			})
		case "gateway", "leaf":
			into := &gatewayCert
			if string(key) == "leaf" {
				into = &leafCert
			}
			err = d.Object(func(key []byte) error {
				if string(key) != "tls_cert_not_after" {
					return d.Skip()
				}
				var err error
				*into, err = d.Time("certificate expiry")
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return Loaded{}, err
	}
	if l.ServerID == "" {
		return Loaded{}, fmt.Errorf("/varz names no server id")
	}
	if !clientCert.IsZero() {
		l.CertNotAfter["client"] = clientCert
	}
	if !routeCert.IsZero() {
		l.CertNotAfter["routes"] = routeCert
	}
	if !gatewayCert.IsZero() {
		l.CertNotAfter["gateway"] = gatewayCert
	}
	if !leafCert.IsZero() {
		l.CertNotAfter["leafnodes"] = leafCert
	}
	l.SinceLoad = max(now.Sub(loaded), 0)
	return l, nil
}
