// Package inprocess runs the operator inside a test or demo process,
// exactly as it ships (manager.New), against a cluster its caller started
// or, for the envtest suites, one it starts itself (RunEnvtest).
package inprocess

import (
	"context"
	"io"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
)

// Operator starts the operator and waits until its caches are synced, so
// that what a caller times afterwards is the operator's work, not its
// start. dial resolves the cluster's Service names for its NATS
// connections. stop ends it and returns how it ended. A process may run it
// more than once, one after another (a benchmark with -count).
func Operator(ctx context.Context, cfg *rest.Config, dial jetstream.DialerFunc) (stop func() error, _ error) {
	return OperatorWith(ctx, cfg, manager.Options{Dialer: dial})
}

// OperatorWith is Operator with more of the manager's options (o.Dialer
// among them); what a test process needs is set on top. The metrics are
// served only where o.MetricsBindAddress says (a suite whose Prometheus
// scrapes the operator); health probes never.
func OperatorWith(ctx context.Context, cfg *rest.Config, o manager.Options) (stop func() error, _ error) {
	if o.MetricsBindAddress == "" {
		o.MetricsBindAddress = "0"
	}
	o.HealthProbeBindAddress = "0"
	// The tests' NATS systems named by connection.servers run on
	// loopback addresses.
	o.AllowLocalTargets, o.RepeatedInProcess = true, true
	return Start(ctx, cfg, o)
}

// SwitchWriter writes to a target that can change while in use: the
// process-wide logger is set once, before the operator's log file exists.
type SwitchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to the current target (nowhere before Set).
func (s *SwitchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

// Set changes the target.
func (s *SwitchWriter) Set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}
