package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubenats/kubenats/test/inprocess"
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
	operatorLog.Set(f)
	stopOperator, err := inprocess.Operator(ctx, lc.Config, lc.Dial)
	if err != nil {
		return nil, err
	}
	say("operator running (log: %s)", logPath)
	return func() {
		if err := stopOperator(); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
		}
		operatorLog.Set(io.Discard)
		_ = f.Close()
	}, nil
}

// operatorLog is where controller-runtime's log lines go: nowhere until
// the operator's log file exists.
var operatorLog = &inprocess.SwitchWriter{}
