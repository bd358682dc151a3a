package inprocess

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubenats/kubenats/internal/manager"
)

// Start runs manager.New(cfg, opts) until stop is called and returns once
// its caches are synced, so that what a caller does next meets an operator
// that sees the cluster. stop ends it and returns how it ended.
func Start(ctx context.Context, cfg *rest.Config, opts manager.Options) (stop func() error, _ error) {
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the operator's caches did not sync: %v", <-done)
	}
	return func() error {
		cancel()
		return <-done
	}, nil
}

// SetTestLogger sends the operator's logs to stderr, quiet unless
// KUBENATS_TEST_LOG is set.
func SetTestLogger() {
	level := zapcore.Level(2)
	if os.Getenv("KUBENATS_TEST_LOG") != "" {
		level = -1
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(level)))
}

// RepoRoot is the directory of the go.mod above the working directory (a
// test's package directory).
func RepoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("no go.mod above " + dir)
		}
		dir = parent
	}
}
