package loopback

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"time"
)

// The mesh's certificate authority and workload identities, as istiod's CA
// issues them: one root, and for every workload a short-lived certificate
// whose only name is the URI SAN spiffe://<trust domain>/ns/<ns>/sa/<sa>.
// internal/pki issues DNS names only, so this uses crypto/x509 directly.

// trustDomain is Istio's default trust domain.
const trustDomain = "cluster.local"

// spiffeID is the identity of the workloads running as service account sa
// in namespace ns.
func spiffeID(ns, sa string) string {
	return "spiffe://" + trustDomain + "/ns/" + ns + "/sa/" + sa
}

// meshCA is the root every sidecar trusts.
type meshCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newMeshCA() (*meshCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := certTemplate(pkix.Name{Organization: []string{trustDomain}, CommonName: "loopback mesh root"})
	if err != nil {
		return nil, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &meshCA{cert: cert, key: key, pool: pool}, nil
}

// workloadCert is the certificate of identity spiffeID(ns, sa), good for
// serving and for client authentication, as Istio's are.
func (ca *meshCA) workloadCert(ns, sa string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	id, err := url.Parse(spiffeID(ns, sa))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl, err := certTemplate(pkix.Name{})
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.URIs = []*url.URL{id}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func certTemplate(subject pkix.Name) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour)}, nil
}

// verifyPeer checks a peer's chain against the mesh root (Go's own
// verification wants a DNS name, which workload certificates lack) and
// returns its SPIFFE identity.
func (ca *meshCA) verifyPeer(rawCerts [][]byte) (string, error) {
	if len(rawCerts) == 0 {
		return "", errors.New("mesh: the peer sent no certificate")
	}
	leaf, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return "", err
	}
	inter := x509.NewCertPool()
	for _, raw := range rawCerts[1:] {
		if c, err := x509.ParseCertificate(raw); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return "", fmt.Errorf("mesh: peer certificate: %w", err)
	}
	if len(leaf.URIs) != 1 || leaf.URIs[0].Scheme != "spiffe" {
		return "", errors.New("mesh: the peer certificate carries no SPIFFE identity")
	}
	return leaf.URIs[0].String(), nil
}

// servingCert is a certificate for an HTTPS server at ip, signed by the
// mesh root, as istiod signs its own webhook's serving certificate: the
// webhook's caBundle is the mesh root. PEM certificate and key.
func (ca *meshCA) servingCert(ip net.IP) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := certTemplate(pkix.Name{CommonName: "istiod"})
	if err != nil {
		return nil, nil, err
	}
	tmpl.IPAddresses = []net.IP{ip}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// rootPEM is the mesh root, as istiod publishes it (istio-ca-root-cert).
func (ca *meshCA) rootPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}
