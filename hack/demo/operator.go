package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/loopback"
)

// startOperator runs the operator in this process, as the e2e tests do,
// its log in the cluster's directory. Its NATS connections resolve the
// cluster's Service names through the loopback cluster.
func startOperator(ctx context.Context, lc *loopback.Cluster) (stop func(), _ error) {
	logPath := filepath.Join(lc.Dir, "logs", "operator.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	operatorLog.set(f)
	mgr, err := manager.New(lc.Config, manager.Options{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Dialer:                 jetstream.DialerFunc(lc.Dial),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the operator did not start: %v", <-done)
	}
	say("operator running (log: %s)", logPath)
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
		}
		operatorLog.set(io.Discard)
		_ = f.Close()
	}, nil
}

// operatorLog is where controller-runtime's log lines go: nowhere until
// the operator's log file exists.
var operatorLog = &switchWriter{w: io.Discard}

type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}
