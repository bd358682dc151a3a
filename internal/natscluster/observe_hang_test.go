package natscluster

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSilentOnlyForNoAnswer: a server that accepts the connection and
// never answers is silent; one that answers with an error, or refuses the
// connection (nothing listens), is not: only a hang holds a rollout up.
func TestSilentOnlyForNoAnswer(t *testing.T) {
	hc := &http.Client{Timeout: 300 * time.Millisecond}
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "JetStream not current", http.StatusServiceUnavailable)
	}))
	defer answering.Close()
	mute, err := net.Listen("tcp", "127.0.0.1:0") // accepts (the kernel does), never reads
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refusing.Addr().String() + "/healthz"
	_ = refusing.Close()

	ctx := context.Background()
	for url, want := range map[string]bool{
		answering.URL + "/healthz": false,
		refusedURL:                 false,
		"http://" + mute.Addr().String() + "/healthz": true,
	} {
		if got := silent(ctx, hc, url, DefaultAnswerBound); got != want {
			t.Errorf("silent(%s) = %v, want %v", url, got, want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if silent(cancelled, hc, "http://"+mute.Addr().String()+"/healthz", DefaultAnswerBound) {
		t.Error("a pass whose context ended called the server silent")
	}
}

func TestHungMessage(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"nats-1":        "server nats-1 does not answer its monitor port within 3s (stopped, or cut off from the operator)",
		"nats-0,nats-2": "servers nats-0, nats-2 do not answer their monitor port within 3s (stopped, or cut off from the operator)",
	} {
		var names []string
		if in != "" {
			names = strings.Split(in, ",")
		}
		if got := hungMessage(names, DefaultAnswerBound); got != want {
			t.Errorf("hungMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
