package loopback

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// fileLog is the harness's own diary (kubelet decisions), kept in a file so
// that a failing test can show it without flooding a passing one.
type fileLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

func openFileLog(path string) (*fileLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &fileLog{f: f, path: path}, nil
}

func (l *fileLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func (l *fileLog) close() { _ = l.f.Close() }
