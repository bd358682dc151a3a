package loopback

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// The sidecars' mutual TLS: each presents its workload's certificate from
// the mesh's CA and checks the peer's SPIFFE identity, as Envoy does.

// serverTLS requires a client certificate from the mesh's CA.
func (s *sidecar) serverTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.cert},
		ClientAuth:   tls.RequireAnyClientCert,
		NextProtos:   istioALPN,
		MinVersion:   tls.VersionTLS12,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := s.m.ca.verifyPeer(raw)
			return err
		},
	}
}

// clientTLS presents this workload's identity and accepts only want's.
func (s *sidecar) clientTLS(want string) *tls.Config {
	return meshClientTLS(s.m.ca, s.cert, want)
}

func meshClientTLS(ca *meshCA, cert tls.Certificate, want string) *tls.Config {
	return &tls.Config{
		Certificates:       []tls.Certificate{cert},
		NextProtos:         istioALPN,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // verified below: by SPIFFE identity, not host name
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			id, err := ca.verifyPeer(raw)
			if err == nil && id != want {
				err = fmt.Errorf("mesh: the server is %s, not %s", id, want)
			}
			return err
		},
	}
}
