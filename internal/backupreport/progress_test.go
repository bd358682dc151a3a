package backupreport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listenOnAnAddressOfItsOwn listens on ProgressPort of a loopback address
// of the test's own, as a Job's pod does on its address.
func listenOnAnAddressOfItsOwn(t *testing.T) (string, net.Listener) {
	t.Helper()
	for range 20 {
		ip := fmt.Sprintf("127.%d.%d.%d", 100+os.Getpid()%100, rand.IntN(250)+1, rand.IntN(250)+1)
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(ProgressPort)))
		if err == nil {
			t.Cleanup(func() { _ = ln.Close() })
			return ip, ln
		}
	}
	t.Fatal("no loopback address with the progress port free")
	return "", nil
}

// TestProgressServedAndFetched: what the board holds is what the operator
// reads, the latest only; before anything is set, nothing done. Careless
// variant watched failing: the board copying its first Progress for good
// (the second read said 10).
func TestProgressServedAndFetched(t *testing.T) {
	ip, ln := listenOnAnAddressOfItsOwn(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	board := &ProgressBoard{}
	go ServeProgress(ctx, ln, board)

	if p, err := FetchProgress(ctx, ip); err != nil || p != (Progress{}) {
		t.Fatalf("before any progress: %+v, %v", p, err)
	}
	board.Set(Progress{Stream: "ORDERS", Done: 10, Total: 100})
	board.Set(Progress{Stream: "ORDERS", Done: 60, Total: 100})
	if p, err := FetchProgress(ctx, ip); err != nil || p != (Progress{Stream: "ORDERS", Done: 60, Total: 100}) {
		t.Fatalf("after two steps: %+v, %v", p, err)
	}
	resp, err := http.Post("http://"+net.JoinHostPort(ip, strconv.Itoa(ProgressPort))+ProgressPath, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a POST was answered %d: the pod serves GET %s alone", resp.StatusCode, ProgressPath)
	}
}

// TestHostileProgressIsRefused: the operator reads a pod on the pod
// network; what answers there is bounded and checked, and a redirect is
// not followed (a pod must never make the operator dial elsewhere).
// Careless variants watched failing: no read bound (the endless answer
// read for the whole timeout: 1 GiB), redirects followed (the second
// server's answer taken), no range check (a negative count taken), the
// status not looked at (the 500's body taken); the default client, which
// has no timeout, hangs on the silent pod.
func TestHostileProgressIsRefused(t *testing.T) {
	elsewhereIP, elsewhereLn := listenOnAnAddressOfItsOwn(t)
	elsewhere := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"stream":"ELSEWHERE","done":1,"total":2}`))
	})}
	go func() { _ = elsewhere.Serve(elsewhereLn) }()
	t.Cleanup(func() { _ = elsewhere.Close() })

	endlessEnded, endlessWrote := make(chan struct{}), 0
	for name, answer := range map[string]http.HandlerFunc{
		"an endless answer": func(w http.ResponseWriter, _ *http.Request) {
			defer close(endlessEnded)
			chunk := []byte(strings.Repeat("A", 64<<10))
			if _, err := w.Write([]byte(`{"stream":"`)); err != nil {
				return
			}
			for endlessWrote < 1<<30 {
				n, err := w.Write(chunk)
				endlessWrote += n
				if err != nil {
					return
				}
			}
		},
		"a redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+net.JoinHostPort(elsewhereIP, strconv.Itoa(ProgressPort))+ProgressPath, http.StatusFound)
		},
		"a negative count": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"stream":"ORDERS","done":-5,"total":2}`))
		},
		"not JSON": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("INFO {}\r\n")) },
		"an error with a progress in it": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"stream":"ORDERS","done":1,"total":2}`))
		},
		"silence": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		},
	} {
		t.Run(name, func(t *testing.T) {
			ip, ln := listenOnAnAddressOfItsOwn(t)
			srv := &http.Server{Handler: answer}
			go func() { _ = srv.Serve(ln) }()
			t.Cleanup(func() { _ = srv.Close() })
			began := time.Now()
			p, err := FetchProgress(context.Background(), ip)
			if err == nil {
				t.Fatalf("taken: %+v", p)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Fatalf("the refusal took %s", took)
			}
		})
	}
	// The endless answer was cut at the bound: the pod could write no more
	// than the sockets' buffers hold beyond what was read.
	<-endlessEnded
	if endlessWrote >= 64<<20 {
		t.Fatalf("the operator took %d bytes of an endless answer before it hung up", endlessWrote)
	}
	if _, err := FetchProgress(context.Background(), "pod.example.com"); err == nil {
		t.Fatal("a name instead of a pod's address was dialled")
	}
}
