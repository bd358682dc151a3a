package jetstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/test/testnats"
)

// testPKI is a CA and a leaf it signed, in PEM.
type testPKI struct {
	caPEM, certPEM, keyPEM []byte
	ca                     *x509.Certificate
	caKey                  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testPKI {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return &testPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca: ca, caKey: key}
}

// leaf issues a certificate for 127.0.0.1 good for servers and clients.
func (p *testPKI) leaf(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// tlsServer runs a real nats-server that requires TLS, and client
// certificates signed by pki when mutual.
func tlsServer(t *testing.T, pki *testPKI, mutual bool) *server.Server {
	certPEM, keyPEM := pki.leaf(t)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if mutual {
		pool := x509.NewCertPool()
		pool.AddCert(pki.ca)
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return testnats.Start(t, 0, func(o *server.Options) {
		o.TLS, o.TLSConfig, o.TLSVerify, o.TLSTimeout = true, cfg, mutual, 2
	})
}

// TestGuardSpeaksTLSForNatsGo: behind the guard, nats.go reaches servers
// that require TLS, verified with the resource's CA, with its client
// certificate when asked; and a server the CA did not sign is refused.
func TestGuardSpeaksTLSForNatsGo(t *testing.T) {
	pki, other := newTestCA(t), newTestCA(t)
	clientCert, clientKey := pki.leaf(t)
	for _, tc := range []struct {
		name   string
		mutual bool
		spec   func(s *server.Server) ConnSpec
		ok     bool
	}{
		{"server TLS verified with the CA", false, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "tls", Servers: []string{testnats.URL(s)}, CA: pki.caPEM}
		}, true},
		{"mutual TLS", true, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "mtls", Servers: []string{testnats.URL(s)}, CA: pki.caPEM, Cert: clientCert, PrivateKey: clientKey}
		}, true},
		{"tls:// with the CA", false, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "tls-scheme", Servers: []string{"tls://" + s.Addr().String()}, CA: pki.caPEM}
		}, true},
		{"a CA that did not sign the server", false, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "wrong-ca", Servers: []string{testnats.URL(s)}, CA: other.caPEM}
		}, false},
		{"no CA: the system roots do not know it", false, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "no-ca", Servers: []string{testnats.URL(s)}}
		}, false},
		{"mutual TLS without a client certificate", true, func(s *server.Server) ConnSpec {
			return ConnSpec{System: "mtls-no-cert", Servers: []string{testnats.URL(s)}, CA: pki.caPEM}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tlsServer(t, pki, tc.mutual)
			p := newTestPool(t)
			conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, tc.spec(s))
			if err == nil {
				_, err = conn.JS.AccountInfo(testCtx(t))
			}
			if tc.ok && err != nil {
				t.Fatalf("JetStream through TLS: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("connected, want a refusal")
			}
		})
	}
}

// TestGuardRefusesPlaintextWhenTLSIsWanted: a resource with a CA does not
// fall back to plaintext for a server that offers no TLS.
func TestGuardRefusesPlaintextWhenTLSIsWanted(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	_, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"},
		ConnSpec{System: "plain", Servers: []string{testnats.URL(s)}, CA: newTestCA(t).caPEM})
	if err == nil {
		t.Fatal("connected in plaintext although the spec has a CA")
	}
}

// TestGuardTakesTLSWheneverOffered: a host the operator lets answer without
// TLS (a server an earlier release started without client TLS) is reached
// in plaintext only when it offers no TLS at all; a server that offers TLS
// beside plaintext (allow_non_tls) is reached with TLS, and every other
// host that offers none is refused. Careless variants this fails: a
// tolerated host reached in plaintext although it offers TLS (the second
// case reads no TLS version), tolerance for every host (the last case
// connects).
func TestGuardTakesTLSWheneverOffered(t *testing.T) {
	pki := newTestCA(t)
	roots := x509.NewCertPool()
	roots.AddCert(pki.ca)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	tolerated := map[string]bool{"127.0.0.1": true}
	for _, tc := range []struct {
		name      string
		server    func() *server.Server
		plaintext map[string]bool
		wantTLS   bool
		ok        bool
	}{
		{"no TLS offered, host tolerated", func() *server.Server { return testnats.Start(t, 0) }, tolerated, false, true},
		{"TLS offered beside plaintext, host tolerated", func() *server.Server { return plaintextAndTLSServer(t, pki) }, tolerated, true, true},
		{"TLS required, host tolerated", func() *server.Server { return tlsServer(t, pki, false) }, tolerated, true, true},
		{"no TLS offered, host not tolerated", func() *server.Server { return testnats.Start(t, 0) }, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server()
			opts := append(GuardOptions(Guard{TLS: cfg, PlaintextHosts: tc.plaintext, Largest: MaxSystemReply}), nats.NoReconnect(), nats.Timeout(3*time.Second))
			nc, err := nats.Connect("nats://"+s.Addr().String(), opts...)
			if !tc.ok {
				if err == nil {
					nc.Close()
					t.Fatal("connected in plaintext to a host that must speak TLS")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			connz, err := s.Connz(nil)
			if err != nil || len(connz.Conns) != 1 {
				t.Fatalf("connz: %v, %d connections", err, len(connz.Conns))
			}
			if got := connz.Conns[0].TLSVersion != ""; got != tc.wantTLS {
				t.Errorf("the server sees a TLS connection: %v, want %v", got, tc.wantTLS)
			}
		})
	}
}

// plaintextAndTLSServer runs a real nats-server that serves TLS and
// accepts plaintext clients too (allow_non_tls).
func plaintextAndTLSServer(t *testing.T, pki *testPKI) *server.Server {
	certPEM, keyPEM := pki.leaf(t)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return testnats.Start(t, 0, func(o *server.Options) {
		o.TLS, o.TLSConfig, o.TLSTimeout, o.AllowNonTLS = true, cfg, 2, true
	})
}
