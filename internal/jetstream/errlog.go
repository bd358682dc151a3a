package jetstream

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/nats-io/nats.go"
)

// A server sends -ERR lines at will, and nats.go hands most of them
// (permission violations above all) to the connection's error handler
// while the connection stays up: a server that writes them in a loop
// would write the operator's log at the speed of its network (some
// 180 MB/s), for every tenant to pay in disk and log shipping. So each
// connection logs its asynchronous errors through a token bucket: the
// first errorBurst at once, then one per errorInterval, each logged line
// telling how many were dropped since the last one.
const (
	errorBurst    = 5
	errorInterval = 10 * time.Second
	// maxLoggedError bounds the text of one logged error: a -ERR line may
	// be as long as a protocol line (maxProtoLine).
	maxLoggedError = 256
)

// errorLimiter is one connection's token bucket.
type errorLimiter struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
	now        func() time.Time
}

func newErrorLimiter(now func() time.Time) *errorLimiter {
	return &errorLimiter{tokens: errorBurst, now: now}
}

// allow reports whether this error may be logged, and how many were
// dropped since the last one that was.
func (l *errorLimiter) allow() (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(errorBurst, l.tokens+float64(now.Sub(l.last))/float64(errorInterval))
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}

// ErrorHandler is the error handler of one connection to system: its
// asynchronous errors go to logger, rate-limited and bounded in length.
// Give each connection its own: the bucket is per connection, so that one
// flooding server does not silence the others.
func ErrorHandler(logger logr.Logger, system string) nats.ErrHandler {
	return errorHandler(logger, system, time.Now)
}

func errorHandler(logger logr.Logger, system string, now func() time.Time) nats.ErrHandler {
	limit := newErrorLimiter(now)
	return func(_ *nats.Conn, _ *nats.Subscription, err error) {
		ok, suppressed := limit.allow()
		if !ok {
			return
		}
		text := err.Error()
		if len(text) > maxLoggedError {
			text = text[:maxLoggedError] + " [...]"
		}
		kv := []any{"system", system, "error", text}
		if suppressed > 0 {
			kv = append(kv, "suppressed", suppressed)
		}
		logger.Info("NATS connection error", kv...)
	}
}
