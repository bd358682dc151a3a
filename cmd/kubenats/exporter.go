package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubenats/kubenats/internal/exporter"
)

// runExporter is `kubenats exporter`, the metrics container of a server
// pod: it reads its own server's monitor port over the pod's loopback and
// serves the series on -listen. It needs no Kubernetes API access and no
// secret: with monitor TLS it reads only the CA (and, when clients must
// present a certificate, the server's own) from files render mounts.
func runExporter(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("exporter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	monitor := fs.String("monitor-url", "http://127.0.0.1:8222", "the server's monitor port (https with monitor TLS)")
	listen := fs.String("listen", ":7777", "address to serve /metrics on")
	server := fs.String("server-name", os.Getenv("POD_NAME"), "the server's name (its pod's name): server_id and server_name of every series")
	namespace := fs.String("namespace", "", "the NatsCluster's namespace, as the namespace label")
	cluster := fs.String("natscluster", "", "the NatsCluster's name, as the natscluster label")
	maxSeries := fs.Int("max-series", 10000, "stream and consumer series served per scrape at most")
	caFile := fs.String("tls-ca", "", "CA the monitor port's certificate chains to (https)")
	certFile := fs.String("tls-cert", "", "certificate to present to the monitor port, when it verifies clients")
	keyFile := fs.String("tls-key", "", "key of -tls-cert")
	serverName := fs.String("tls-server-name", "", "name to verify the monitor port's certificate under")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *server == "" || *namespace == "" || *cluster == "" || *maxSeries < 1 {
		fmt.Fprintln(stderr, "kubenats exporter: -server-name (or POD_NAME), -namespace and -natscluster are required, -max-series at least 1")
		return 2
	}
	tlsConfig, err := exporterTLS(*caFile, *certFile, *keyFile, *serverName)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats exporter: %v\n", err)
		return 1
	}
	fetch, err := exporter.NewHTTPFetcher(*monitor, tlsConfig)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats exporter: %v\n", err)
		return 2
	}
	c := exporter.NewCollector(exporter.Identity{Server: *server, Namespace: *namespace, NatsCluster: *cluster}, fetch, *maxSeries)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := exporter.Serve(ctx, *listen, exporter.Handler(c)); err != nil {
		fmt.Fprintf(stderr, "kubenats exporter: %v\n", err)
		return 1
	}
	return 0
}

// exporterTLS trusts ca (none: plain http) and presents cert and key when
// given. The certificate is re-read at each handshake, so that a renewed
// one is used without a restart.
func exporterTLS(ca, cert, key, serverName string) (*tls.Config, error) {
	if ca == "" {
		if cert != "" || key != "" {
			return nil, errors.New("-tls-cert and -tls-key need -tls-ca")
		}
		return nil, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", ca)
	}
	cfg := &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if (cert == "") != (key == "") {
		return nil, errors.New("-tls-cert and -tls-key go together")
	}
	if cert != "" {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			pair, err := tls.LoadX509KeyPair(cert, key)
			return &pair, err
		}
	}
	return cfg, nil
}
