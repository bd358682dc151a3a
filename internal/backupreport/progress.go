package backupreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Progress is how far a running backup or restore has come. The Job's pod
// serves it while it runs; the operator reads it into the status. The pod
// has no API token, so it cannot write the status itself.
type Progress struct {
	// Stream is the stream being copied (one after the other in a backup
	// of every stream).
	Stream string `json:"stream"`
	// Done is the archive's bytes written (a backup) or sent to the server
	// (a restore) so far.
	Done int64 `json:"done"`
	// Total is what Done heads for: the archive's size for a restore; for
	// a backup the stream's stored bytes as the snapshot began, which the
	// compressed archive usually stays under.
	Total int64 `json:"total"`
}

// ProgressPort is where a Job's pod serves its progress, on its own
// address; the path is ProgressPath.
const (
	ProgressPort = 8090
	ProgressPath = "/progress"
)

// progressLimit bounds what the operator reads of a progress answer: a
// Progress is well under 300 bytes.
const progressLimit = 1024

// ProgressBoard holds the latest Progress for the server to answer with.
type ProgressBoard struct{ latest atomic.Pointer[Progress] }

// Set makes p the answer.
func (b *ProgressBoard) Set(p Progress) { b.latest.Store(&p) }

func (b *ProgressBoard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != ProgressPath {
		http.NotFound(w, r)
		return
	}
	p := b.latest.Load()
	if p == nil {
		p = &Progress{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p)
}

// ServeProgress answers progress requests on ln with board until ctx
// ends. Only GET ProgressPath is served, with short timeouts: the port
// is open to the pod network.
func ServeProgress(ctx context.Context, ln net.Listener, board *ProgressBoard) {
	srv := &http.Server{Handler: board, ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second,
		WriteTimeout: 2 * time.Second, IdleTimeout: 10 * time.Second, MaxHeaderBytes: 4 << 10}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	_ = srv.Serve(ln)
}

// progressClient never follows a redirect (a pod answering one is not a
// backup's pod) and waits at most two seconds.
var progressClient = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true, MaxResponseHeaderBytes: 4 << 10},
}

// FetchProgress asks the Job's pod at podIP how far it has come. What it
// answers is bounded and checked: it is read, never trusted further.
func FetchProgress(ctx context.Context, podIP string) (Progress, error) {
	ip := net.ParseIP(podIP)
	if ip == nil {
		return Progress{}, fmt.Errorf("progress: %q is no IP address", podIP)
	}
	url := "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(ProgressPort)) + ProgressPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Progress{}, err
	}
	resp, err := progressClient.Do(req)
	if err != nil {
		return Progress{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Progress{}, fmt.Errorf("progress: the pod answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, progressLimit+1))
	if err != nil {
		return Progress{}, err
	}
	if len(body) > progressLimit {
		return Progress{}, errors.New("progress: the pod's answer is too long")
	}
	var p Progress
	if err := json.Unmarshal(body, &p); err != nil {
		return Progress{}, fmt.Errorf("progress: %w", err)
	}
	if p.Done < 0 || p.Total < 0 || len(p.Stream) > 255 || !utf8.ValidString(p.Stream) {
		return Progress{}, errors.New("progress: the pod's answer is out of range")
	}
	return p, nil
}
