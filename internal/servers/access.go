// Package servers reaches a NatsCluster's servers for every controller:
// the system user's credentials, the client TLS the servers expect, the
// dial pinned to the pods the cluster's own StatefulSet controls, system
// and account connections, monitor URLs, and the pooled JetStream
// connections' targets. It sits below the controllers and imports none.
package servers

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
)

// Access is how the operator reaches one cluster's servers: as its
// system user on the client port, and on the monitor port, each with the
// TLS the servers expect. Servers are dialed at their pod addresses and
// verified under their DNS names (the certificates carry no addresses).
type Access struct {
	Cluster *v1alpha1.NatsCluster
	// Password is the system user's in mode users.
	Password string
	// UserJWT and Seed are the system user's in mode jwt.
	UserJWT, Seed string
	// TLS trusts the client CA and, when clients must present a
	// certificate, presents the servers' own.
	TLS *tls.Config
	// MonitorTLS: the monitor port speaks https.
	MonitorTLS bool
	// Dial is the Reach's Dialer; nil: plain TCP.
	Dial nats.CustomDialer
}

// clientTLSConfig trusts ca.crt and, with verify, presents tls.crt: the
// operator needs no client certificate of its own (the issued one carries
// client auth).
func clientTLSConfig(data map[string][]byte, verify bool) (*tls.Config, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[render.TLSCAKey]) {
		return nil, errors.New("the client certificate's Secret has no usable ca.crt")
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if verify {
		pair, err := tls.X509KeyPair(data[render.TLSCertKey], data[render.TLSKeyKey])
		if err != nil {
			return nil, errors.New("the client certificate's Secret has no usable tls.crt and tls.key")
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// connect connects as the system user to the servers of pods, taking
// messages of at most largest bytes: jetstream.MaxSystemReply for a ping
// that collects every server's JetStream view, jetstream.MaxSystemAnswer
// for requests to single servers. The connection is short-lived: these
// requests are rare (reloads, rollouts, scale-down), so no pool is worth
// keeping. The URLs name the servers by DNS name, so that nats.go verifies
// each against its certificate; the dialer maps each name to its pod's
// address.
func (a Access) Connect(pods []corev1.Pod, largest int) (*nats.Conn, error) {
	return a.ConnectAs(pods, a.Credentials(), "kubenats-system", largest)
}

// connectAs is connect with other credentials, under the client name name,
// taking messages of at most largest bytes. The connection counts to the
// cluster's namespace in the operator's connections and memory budget
// (jetstream.Connect): one refused for the allowance returns
// serverbudget.ErrConnectionLimit, which the caller reports.
func (a Access) ConnectAs(pods []corev1.Pod, creds nats.Option, name string, largest int) (*nats.Conn, error) {
	addrs := map[string]string{}
	plaintext := map[string]bool{}
	var urls []string
	for i := range pods {
		if ip := pods[i].Status.PodIP; ip != "" && pods[i].DeletionTimestamp.IsZero() {
			host := a.Cluster.PodDNSName(pods[i].Name)
			addrs[host] = ip
			plaintext[host] = ServesNoClientTLS(&pods[i])
			// nats://: the guard, not nats.go, insists on TLS (nats.go
			// would insist for the whole pool, also on a server an
			// earlier release started without it).
			urls = append(urls, "nats://"+net.JoinHostPort(host, strconv.Itoa(render.ClientPort)))
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("no server to connect to")
	}
	// The servers run the image spec.image names: the guard caps what they
	// may send, and speaks the TLS itself, verifying each server under its
	// DNS name.
	var cfg *tls.Config
	if a.TLS != nil {
		cfg = a.TLS.Clone()
	}
	guard := jetstream.Guard{TLS: cfg, TLSFirst: a.Cluster.Spec.ClientTLS().HandshakeFirst, PlaintextHosts: plaintext,
		Transport: podDialer{addrs: addrs, transport: a.Dial}, Largest: largest, Namespace: a.Cluster.Namespace}
	nc, err := jetstream.Connect(strings.Join(urls, ","), guard, creds,
		nats.Name(name), nats.NoReconnect(), nats.Timeout(3*time.Second),
		// Without a handler nats.go writes every asynchronous error (each
		// -ERR the server sends) to standard error, unbounded.
		nats.ErrorHandler(jetstream.ErrorHandler(systemLog, "natscluster/"+a.Cluster.Namespace+"/"+a.Cluster.Name)))
	if err != nil {
		return nil, fmt.Errorf("connecting as %s: %w", name, err)
	}
	return nc, nil
}

// credentials are the system user's: its JWT and seed in mode jwt, its
// password otherwise.
func (a Access) Credentials() nats.Option {
	if a.UserJWT != "" {
		return nats.UserJWTAndSeed(a.UserJWT, a.Seed)
	}
	return nats.UserInfo(render.SystemUser, a.Password)
}

// systemLog is where the system account connections' errors go.
var systemLog = ctrl.Log.WithName("nats-system")

// podDialer dials the pod address behind a server's DNS name, and nothing
// else: the operator never dials a name a pod did not give it.
type podDialer struct {
	addrs map[string]string
	// transport dials the address; nil: plain TCP.
	transport nats.CustomDialer
}

func (d podDialer) Dial(network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip, ok := d.addrs[host]
	if !ok {
		return nil, fmt.Errorf("%s is not a server of this cluster", host)
	}
	if d.transport != nil {
		return d.transport.Dial(network, net.JoinHostPort(ip, port))
	}
	return (&net.Dialer{Timeout: 3 * time.Second}).Dial(network, net.JoinHostPort(ip, port))
}

// monitorURL is the URL of path on pod's monitor port, and the client that
// may fetch it: https verified under the pod's DNS name, or plain http.
// Either follows no redirect and dials only the pod's address (the
// transport of natsmon.NewTransport, whose dial the https one keeps).
func (a Access) MonitorURL(plain *http.Client, pod *corev1.Pod, path string) (string, *http.Client) {
	hostPort := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(render.MonitorPort))
	if !a.MonitorTLS || a.TLS == nil {
		return "http://" + hostPort + path, plain
	}
	cfg := a.TLS.Clone()
	cfg.ServerName = a.Cluster.PodDNSName(pod.Name)
	var transport *http.Transport
	if t, ok := plain.Transport.(*http.Transport); ok {
		transport = t.Clone() // the pinned dial, through the operator's own dialer
	} else {
		transport = natsmon.NewTransport(nil)
	}
	transport.TLSClientConfig = cfg
	return "https://" + hostPort + path, natsmon.NewClient(plain.Timeout, transport)
}
