package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/netutil"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Bounds on what anyone who reaches the port can make a replica hold: the
// API server sends one small object per review (a NatsUser, a Stream: the
// CRDs' schemas keep them far below a MiB) and waits at most its timeout
// (config/webhook: 5 s). A review past these bounds is answered with an
// HTTP error, which the API server takes as the webhook failing: the
// object is admitted (failure policy Ignore), never refused for its size.
// Connections past maxConnections wait unaccepted (the API server keeps
// a few alive and reuses them), so that a flood of them costs no memory;
// one peer holds at most maxConnectionsPerPeer of them (peer_listener.go).
const (
	maxConnections    = 32
	maxReviewBytes    = 1 << 20
	maxReviewsAtOnce  = 4
	slotWait          = 2 * time.Second
	reviewReadTimeout = 10 * time.Second
)

// Server serves the reviews over TLS, on every replica, with the
// certificate the Secret holds as the cache last saw it.
type Server struct {
	// Listener, when set, is where it serves; otherwise it listens on Addr.
	Listener net.Listener
	Addr     string
	// Cache reads the Secret.
	Cache     client.Reader
	Namespace string
	// Reader reads accounts past the cache (AccountReferences).
	Reader client.Reader

	served atomic.Pointer[servingCert]
}

// servingCert is the parsed certificate of one version of the Secret.
type servingCert struct {
	version string
	cert    *tls.Certificate
}

// NeedLeaderElection is false: every replica answers the API server.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	ln := s.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.Addr); err != nil {
			return fmt.Errorf("webhook: %w", err)
		}
	}
	ln = boundListener(ln)
	mux := http.NewServeMux()
	reviews := &admission.Webhook{Handler: &AccountReferences{Reader: s.Reader}}
	mux.Handle(AccountReferencePath, bounded(reviews, maxReviewsAtOnce, slotWait))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: reviewReadTimeout,
		ReadTimeout:       reviewReadTimeout,
		MaxHeaderBytes:    16 << 10,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certificate},
		// Failed handshakes (before the first certificate is issued, or a
		// scanner) are debug output, not the operator's errors.
		ErrorLog: log.New(debugWriter{ctrl.Log.WithName("webhook")}, "", 0),
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// boundListener accepts at most maxConnections at once, at most
// maxConnectionsPerPeer of them from one remote address.
func boundListener(ln net.Listener) net.Listener {
	return netutil.LimitListener(limitPerPeer(ln, maxConnectionsPerPeer), maxConnections)
}

// bounded holds at most n reviews at once (one waits up to wait for its
// turn), each read whole within maxReviewBytes before it is decoded, so
// that memory stays bounded however many connections arrive and whatever
// they send.
func bounded(h http.Handler, n int, wait time.Duration) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		turn := time.NewTimer(wait)
		defer turn.Stop()
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-turn.C:
			http.Error(w, "too many reviews at once", http.StatusTooManyRequests)
			return
		case <-r.Context().Done():
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReviewBytes))
		if err != nil {
			http.Error(w, "the review could not be read whole: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// certificate is the Secret's certificate, parsed once per version of it.
func (s *Server) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	secret := &corev1.Secret{}
	if err := s.Cache.Get(hello.Context(), client.ObjectKey{Namespace: s.Namespace, Name: SecretName}, secret); err != nil {
		return nil, fmt.Errorf("the webhook's serving certificate: %w", err)
	}
	if served := s.served.Load(); served != nil && served.version == secret.ResourceVersion {
		return served.cert, nil
	}
	cert, err := tls.X509KeyPair(secret.Data[certKey], secret.Data[keyKey])
	if err != nil {
		return nil, fmt.Errorf("the webhook's serving certificate: %w", err)
	}
	s.served.Store(&servingCert{version: secret.ResourceVersion, cert: &cert})
	return &cert, nil
}

// debugWriter writes net/http's error lines at debug level.
type debugWriter struct{ log logr.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
