package pki

import (
	"crypto"
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
	"slices"
	"time"
)

// Lifetimes of what the operator issues. The CA outlives many route
// certificates; a route certificate is renewed once two thirds of its life
// have passed (Due), so it never expires under a running cluster.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	CertValidity = 90 * 24 * time.Hour
)

// KeyPair is a certificate and its private key, PEM.
type KeyPair struct {
	Cert, Key string
}

// NewCA makes a self-signed CA valid from now for validity.
func NewCA(commonName string, now time.Time, validity time.Duration) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	tmpl, err := template(commonName, now, validity)
	if err != nil {
		return KeyPair{}, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return KeyPair{}, err
	}
	return encode(der, key)
}

// Issue signs a certificate for names with ca, valid from now for
// validity, good for both ends of a connection (routes dial and accept).
// A name that is an IP address goes into the certificate's IP addresses,
// where a client dialing that address looks for it.
func Issue(ca KeyPair, names []string, now time.Time, validity time.Duration) (KeyPair, error) {
	caCert, err := ParseCert(ca.Cert)
	if err != nil {
		return KeyPair{}, fmt.Errorf("CA: %w", err)
	}
	caKey, err := parseKey(ca.Key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	cn := ""
	if len(names) > 0 {
		cn = names[0]
	}
	tmpl, err := template(cn, now, validity)
	if err != nil {
		return KeyPair{}, err
	}
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return KeyPair{}, err
	}
	return encode(der, key)
}

func template(commonName string, now time.Time, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"kubenats"}},
		// A minute back: the clocks of the servers may trail the operator's.
		NotBefore: now.Add(-time.Minute),
		NotAfter:  now.Add(validity),
	}, nil
}

func encode(der []byte, key *ecdsa.PrivateKey) (KeyPair, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{
		Cert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		Key:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
	}, nil
}

// FirstCertPEM is the first certificate of a PEM chain, PEM, or "": the
// certificate itself without the issuers cert-manager appends to tls.crt.
func FirstCertPEM(chain string) string {
	block, _ := pem.Decode([]byte(chain))
	if block == nil || block.Type != "CERTIFICATE" {
		return ""
	}
	return string(pem.EncodeToMemory(block))
}

// Names are the DNS names and IP addresses a certificate is for, as Issue
// was given them.
func Names(cert *x509.Certificate) []string {
	out := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// ParseCert reads the first certificate of a PEM bundle.
func ParseCert(pemText string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("no PEM private key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the private key cannot sign")
	}
	return signer, nil
}

// KeyMatches reports whether keyPEM is the private key of the first
// certificate of certPEM: the pair a server presents must be one, or it
// either fails to load or claims an identity it cannot prove. Any key
// form nats-server reads (PKCS#1, PKCS#8, SEC 1) is read here too.
func KeyMatches(certPEM, keyPEM string) bool {
	_, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	return err == nil
}
