package jetstream

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ConnSpec is everything needed to dial one NATS system as one identity.
// Two resources with equal specs share a connection; a rotated credential
// is a different spec, so the next reconcile moves to a fresh connection.
type ConnSpec struct {
	// System names the NATS system, for logs and metrics (never secret).
	System  string
	Servers []string
	Domain  string
	// External marks a system kubenats does not run (connection.servers):
	// its addresses are checked against the pool's TargetPolicy. (The
	// servers any system tells of are ignored, External or not.)
	External bool
	// Pinned names the NatsCluster ("namespace/name") whose own server pods
	// are all the connection may reach, whatever its URL resolves to: the
	// URL's name (the client Service) is only what TLS verifies. A Service
	// leads wherever its endpoints say, and a tenant who may write
	// EndpointSlices in the cluster's namespace could point the operator,
	// which every NetworkPolicy admits, at another tenant's servers.
	Pinned string
	// Namespace, for a system kubenats does not run, is that of the
	// resources that name it (connection.servers): the pods and Services
	// of no other namespace may be dialled (TargetPolicy.Holders), one
	// connection never serves two namespaces, and the connection counts
	// to that namespace's share of the operator's connections and memory
	// budget. A pinned connection counts to its cluster's namespace,
	// whose servers run the image that namespace chose.
	Namespace string

	User, Password, Token string
	Creds                 []byte // a creds file (JWT and nkey seed)
	NKeySeed              []byte
	CA, Cert, PrivateKey  []byte // PEM
	// TLSHandshakeFirst: the servers expect TLS before their INFO.
	TLSHandshakeFirst bool
}

// Key identifies the spec by content. It is a hash: the pool's map keys
// never hold a credential.
func (s ConnSpec) Key() string {
	h := sha256.New()
	for _, part := range [][]byte{
		[]byte(s.System), []byte(strings.Join(s.Servers, "\n")), []byte(s.Domain), []byte(strconv.FormatBool(s.External)), []byte(s.Namespace), []byte(s.Pinned),
		[]byte(s.User), []byte(s.Password), []byte(s.Token), s.Creds, s.NKeySeed, s.CA, s.Cert, s.PrivateKey,
		[]byte(fmt.Sprint(s.TLSHandshakeFirst)),
	} {
		h.Write([]byte{byte(len(part) >> 8), byte(len(part))})
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// namespace is the namespace whose servers the connection reaches.
func (s ConnSpec) namespace() string {
	if ns, _, ok := strings.Cut(s.Pinned, "/"); ok {
		return ns
	}
	return s.Namespace
}

// options turns the spec into nats.go options; dialer is the guard, which
// speaks TLS.
func (s ConnSpec) options(dialer nats.CustomDialer) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name("kubenats"),
		nats.MaxReconnects(-1),
		// A reconnect storm from a thousand resources would hurt the
		// servers more than a slower recovery.
		nats.ReconnectJitter(100e6, 1e9),
		// Asynchronous errors (a refused reconnect, a slow consumer) go to
		// the operator's log, not to standard error, and rate-limited: a
		// server can send -ERR lines without end (errlog.go).
		nats.ErrorHandler(ErrorHandler(log, s.System)),
	}
	if dialer != nil {
		// The guard resolves names itself, under its deadline and after
		// checking where they lead.
		opts = append(opts, nats.SetCustomDialer(dialer), nats.SkipHostLookup())
	}
	// Never the servers an INFO tells of, whoever runs the system: a
	// server of connection.servers, or one running a NatsCluster's
	// spec.image (which need not be nats-server), could otherwise send the
	// operator and its credentials anywhere with connect_urls. The URLs
	// given (a cluster's client Service, or the list the tenant wrote)
	// are all it dials.
	opts = append(opts, nats.IgnoreDiscoveredServers())
	switch {
	case len(s.Creds) > 0:
		opt, err := CredsOption(s.Creds)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	case len(s.NKeySeed) > 0:
		opt, err := nkeyOption(s.NKeySeed)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	case s.Token != "":
		opts = append(opts, nats.Token(s.Token))
	case s.User != "":
		opts = append(opts, nats.UserInfo(s.User, s.Password))
	}
	// No nats.Secure: the guard makes the TLS handshake itself, with
	// s.tlsConfig, and insists on it (guardDialer.wantTLS); told Secure,
	// nats.go would insist for the whole pool, also on a pod an earlier
	// release started without client TLS (PodAddr.ServesNoTLS).
	return opts, nil
}

func (s ConnSpec) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(s.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.CA) {
			return nil, errors.New("ca.crt holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if len(s.Cert) > 0 {
		pair, err := tls.X509KeyPair(s.Cert, s.PrivateKey)
		if err != nil {
			return nil, errors.New("tls.crt and tls.key do not form a key pair")
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

var log = ctrl.Log.WithName("nats")

// DialerFunc adapts a function to nats.CustomDialer; tests use it to resolve
// cluster DNS names that only exist inside a real cluster.
type DialerFunc func(network, address string) (net.Conn, error)

// Dial implements nats.CustomDialer.
func (f DialerFunc) Dial(network, address string) (net.Conn, error) { return f(network, address) }
