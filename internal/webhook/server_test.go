package webhook

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBoundedHoldsFewReviewsOfBoundedSize: while n reviews are held, the
// next one is turned away once its wait is over, and a body over the bound
// is an HTTP error (the API server's failure policy then applies), never
// handed on to be decoded. Careless variants caught: no slots (all
// n+1 reach the handler), a body limit left to the decoder (7 MiB read,
// then answered as a denial).
func TestBoundedHoldsFewReviewsOfBoundedSize(t *testing.T) {
	const n = 2
	release := make(chan struct{})
	var mu sync.Mutex
	inside := 0
	h := bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inside++
		mu.Unlock()
		if r.Header.Get("hold") != "" {
			<-release
		}
		_, _ = io.Copy(io.Discard, r.Body)
	}), n, 200*time.Millisecond)

	var held sync.WaitGroup
	for range n {
		held.Go(func() {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, AccountReferencePath, strings.NewReader("{}"))
			req.Header.Set("hold", "1")
			h.ServeHTTP(rec, req)
		})
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return inside == n })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, AccountReferencePath, strings.NewReader("{}")))
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("review %d while %d held: %d, want 429", n+1, n, rec.Code)
	}
	close(release)
	held.Wait()

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, AccountReferencePath, bytes.NewReader(make([]byte, maxReviewBytes+1))))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %d, want 413", rec.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	if inside != n {
		t.Errorf("%d reviews reached the handler, want %d", inside, n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("not within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
