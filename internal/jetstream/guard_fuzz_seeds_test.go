package jetstream

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubenats/kubenats/test/testnats"
)

var writeGuardSeeds = flag.Bool("write-guard-seeds", false, "rewrite testdata/fuzz/FuzzGuardAgainstNatsGo from real nats-server sessions and the known bad framings")

// TestWriteGuardFuzzSeeds writes FuzzGuardAgainstNatsGo's seed corpus when
// asked (-write-guard-seeds): what a real nats-server with JetStream
// sends a client that creates a stream and a consumer, asks for their
// info, meets no responders and an API error (in verbose mode too, for
// +OK), and the framings that broke or could break the guard.
//
// Without the flag it makes the same seeds and requires each to be in the
// checked-in corpus by name, so that a seed added here and never written
// fails.
func TestWriteGuardFuzzSeeds(t *testing.T) {
	seeds := map[string]string{
		"real-jetstream":         captureSession(t, false),
		"real-jetstream-verbose": captureSession(t, true),
	}
	for name, s := range badFramingSeeds() {
		seeds[name] = s
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzGuardAgainstNatsGo")
	if !*writeGuardSeeds {
		for name := range seeds {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("seed %s is not in the corpus (run with -write-guard-seeds): %v", name, err)
			}
		}
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(s))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// captureSession records the bytes a real nats-server sends one client.
// Its subscriptions are sids 1 and 2, as the fuzz target's child makes
// them, so that the messages reach a subscription there.
func captureSession(t *testing.T, verbose bool) string {
	s := testnats.Start(t, 0)
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pub := func(subject, reply, body string) string {
		return "PUB " + subject + " " + reply + " " + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n"
	}
	hdr := "NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n"
	client := fmt.Sprintf(`CONNECT {"verbose":%t,"pedantic":false,"headers":true,"no_responders":true,"protocol":1}`, verbose) + "\r\nPING\r\n" +
		"SUB _INBOX.r.* 1\r\nSUB $JS.EVENT.> 2\r\n" +
		pub("$JS.API.STREAM.CREATE.S", "_INBOX.r.1", `{"name":"S","subjects":["s.>"],"storage":"memory","num_replicas":1}`) +
		pub("$JS.API.CONSUMER.CREATE.S.C", "_INBOX.r.2", `{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}`) +
		pub("$JS.API.STREAM.INFO.S", "_INBOX.r.3", "") +
		pub("$JS.API.CONSUMER.INFO.S.C", "_INBOX.r.4", "") +
		pub("$JS.API.STREAM.INFO.MISSING", "_INBOX.r.5", "") +
		"HPUB nobody.home _INBOX.r.6 " + strconv.Itoa(len(hdr)) + " " + strconv.Itoa(len(hdr)+2) + "\r\n" + hdr + "hi\r\n" +
		"HPUB s.x _INBOX.r.7 " + strconv.Itoa(len(hdr)) + " " + strconv.Itoa(len(hdr)+2) + "\r\n" + hdr + "hi\r\n" +
		"PING\r\n"
	if _, err := c.Write([]byte(client)); err != nil {
		t.Fatal(err)
	}
	// Read until the last PONG (the second) and a little after, for the
	// advisories.
	var got strings.Builder
	r := bufio.NewReader(c)
	pongs := 0
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for pongs < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the session: %v (so far %q)", err, got.String())
		}
		got.WriteString(line)
		if line == "PONG\r\n" {
			pongs++
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	rest := make([]byte, 64<<10)
	for {
		n, err := r.Read(rest)
		got.Write(rest[:n])
		if err != nil {
			break
		}
	}
	return got.String()
}

// badFramingSeeds are the framings a careless guard could pass, each
// after a greeting that lets nats.go connect.
func badFramingSeeds() map[string]string {
	huge := "MSG _INBOX.x 1 1000000000000000\r\n"
	status408 := "NATS/1.0 408 Request Timeout\r\nA: b\r\n\r\n"
	seeds := map[string]string{
		"off-by-one":                offByOneFraming(),
		"payload-byte-lf":           "MSG _INBOX.x 1 1\r\nxy\n" + huge,
		"payload-lf":                "MSG _INBOX.x 1 1\r\nx\n" + huge,
		"payload-no-crlf":           "MSG _INBOX.x 1 1\r\nx",
		"size-1e15":                 huge,
		"size-1e15-lower":           "msg\t_INBOX.x\t1\t1000000000000000\r\n",
		"hmsg-1e15":                 "HMSG _INBOX.x 1 12 1000000000000000\r\n",
		"size-wraps":                "MSG _INBOX.x 1 18446744073709551617\r\nxx\r\n",
		"ping-then-msg":             "PINGMSG _INBOX.x 1 1000000000000000\r\n",
		"lf-only":                   "PING\nMSG _INBOX.x 1 2\nhi\n",
		"hmsg-headers-over-total":   "HMSG _INBOX.x 1 20 10\r\n",
		"hmsg-status-503":           "HMSG _INBOX.x 2 16 16\r\nNATS/1.0 503\r\n\r\n\r\n",
		"hmsg-status-408":           "HMSG _INBOX.x 1 _INBOX.y " + strconv.Itoa(len(status408)) + " " + strconv.Itoa(len(status408)+2) + "\r\n" + status408 + "hi\r\n",
		"leading-zeros-tabs":        "MSG\t_INBOX.x\t0001\t_INBOX.y\t0005 \r\nhello\r\n",
		"err-stale":                 "-ERR 'Stale Connection'\r\n",
		"err-permissions":           "-ERR 'Permissions Violation for Subscription to \"x\"'\r\n",
		"err-authorization":         "-ERR 'Authorization Violation'\r\n",
		"async-info":                `INFO {"server_id":"B","connect_urls":["10.0.0.1:4222"],"ldm":true}` + "\r\n",
		"async-info-bad":            `INFO {"max_payload":"x"` + "\r\n",
		"ping-pong-ok":              "PING\r\n+OK\r\nPONG\r\n",
		"msg-sid-2":                 "MSG _INBOX.abc.1 2 5\r\nhello\r\n",
		"msg-reply-empty-payload":   "MSG s.x 1 _INBOX.r 0\r\n\r\n",
		"msg-payload-looks-like-op": "MSG _INBOX.x 1 35\r\n" + huge + "\r\n\r\n",
		// Well framed, and deadly to nats.go if the guard's own encoder
		// got the end of a payload wrong: the second MSG's payload is a
		// MSG line of 10^15 bytes.
		"msg-then-msg-holding-op": "MSG _INBOX.x 1 1\r\nx\r\nMSG _INBOX.x 1 35\r\n" + huge + "\r\n\r\n",
	}
	for name, s := range seeds {
		seeds[name] = fakeGreeting + s
	}
	seeds["no-info"] = "PONG\r\n" + huge
	seeds["tls-required-info"] = `INFO {"server_id":"T","tls_required":true}` + "\r\nPONG\r\n"
	seeds["greeting-only"] = fakeGreeting
	return seeds
}

// TestGuardPassesRealSessions: what a real nats-server sent (the fuzz
// seeds recorded by TestWriteGuardFuzzSeeds) passes whole, and nats.go
// behind it connects and gets the messages. Catches a guard too strict for
// the real server (it writes "INFO {...} " with a blank before CRLF, and
// advisories as "MSG <subject> 2  <size>" with two blanks).
func TestGuardPassesRealSessions(t *testing.T) {
	for _, name := range []string{"real-jetstream", "real-jetstream-verbose"} {
		stream := readSeed(t, name)
		out, err := guardOutput(stream, readChunk)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if again, _ := guardOutput(out, readChunk); len(again) != len(out) {
			t.Fatalf("%s: the output does not pass whole", name)
		}
		if name == "real-jetstream-verbose" {
			continue // a verbose session's +OK answers CONNECT: the child is not verbose
		}
		before, after := splitAfterFirstPong(out)
		rep, err := runInNatsGoChildReport(sessionNatsGo, before, after)
		if err != nil || !rep.connected || rep.delivered < 5 {
			t.Fatalf("%s: %+v, %v; want connected and the replies delivered", name, rep, err)
		}
	}
}

// readSeed reads a seed of FuzzGuardAgainstNatsGo's corpus.
func readSeed(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzGuardAgainstNatsGo", name))
	if err != nil {
		t.Fatal(err)
	}
	_, quoted, ok := strings.Cut(strings.TrimSpace(string(b)), "[]byte(")
	if !ok {
		t.Fatalf("%s: not a []byte seed", name)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(s)
}
