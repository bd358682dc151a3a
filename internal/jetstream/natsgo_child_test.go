package jetstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A real nats.go connection, in a child process, reading what a fake
// server writes: a panic in nats.go's read loop cannot be recovered, so
// the only way to see one without losing the test is to let it kill
// another process. The child is the test binary itself, run again with
// natsGoChildEnv set; it serves many sessions, one per frame on its stdin,
// and answers "ok" on its stdout after each; a session that kills it is
// the one that was running.

const natsGoChildEnv = "KUBENATS_TEST_NATSGO_CHILD"

// The child's limits: far above what one session of a guarded connection
// needs (one message of at most MaxSystemReply), far below what a
// wrapped-around size asks nats.go to allocate. The Go runtime reserves
// some 1.9 GiB of address space at start; past the hard limit an
// allocation kills the child. Beneath it, a session that allocates more
// than childSessionAlloc in all ends the child too (runaway memory).
const (
	childMemLimit     = "96MiB"
	childAddressSpace = 3 << 30
	childSessionAlloc = 256 << 20
	childSessionWait  = 20 * time.Second
)

// Session modes: what the client is.
const (
	// sessionNatsGo: a plain nats.go client, reading the bytes as written
	// (they are the guard's output).
	sessionNatsGo byte = iota
	// sessionGuarded: nats.go behind the guard (GuardOptions), reading the
	// bytes as a hostile server's.
	sessionGuarded
)

func TestMain(m *testing.M) {
	if os.Getenv(natsGoChildEnv) == "1" {
		os.Exit(runNatsGoChild())
	}
	os.Exit(m.Run())
}

// natsGoChild is the parent's handle on one child process.
type natsGoChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
	done   chan struct{}
}

var (
	sharedChildMu sync.Mutex
	sharedChild   *natsGoChild
)

// runInNatsGoChild runs one session in this process's child, starting one
// when there is none (or the last one died): the fake server writes
// beforeSubs as soon as the client connects, and afterSubs once the
// client has subscribed (or could not). It returns an error when the
// child died or hung during the session, with what it wrote to stderr.
func runInNatsGoChild(mode byte, beforeSubs, afterSubs []byte) error {
	_, err := runInNatsGoChildReport(mode, beforeSubs, afterSubs)
	return err
}

// childReport is what the child saw of a session it survived.
type childReport struct {
	connected bool // nats.Connect succeeded
	delivered int  // messages the ">" callback got
}

// runInNatsGoChildReport is runInNatsGoChild with what the child saw.
func runInNatsGoChildReport(mode byte, beforeSubs, afterSubs []byte) (childReport, error) {
	sharedChildMu.Lock()
	defer sharedChildMu.Unlock()
	if sharedChild == nil {
		c, err := startNatsGoChild()
		if err != nil {
			return childReport{}, err
		}
		sharedChild = c
	}
	rep, err := sharedChild.session(mode, beforeSubs, afterSubs)
	if err != nil {
		sharedChild = nil // died() has reaped it
	}
	return rep, err
}

func startNatsGoChild() (*natsGoChild, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), natsGoChildEnv+"=1", "GOMEMLIMIT="+childMemLimit, "GOTRACEBACK=single")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &natsGoChild{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: c.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *natsGoChild) session(mode byte, beforeSubs, afterSubs []byte) (childReport, error) {
	frame := []byte{mode}
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(beforeSubs)))
	frame = append(frame, beforeSubs...)
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(afterSubs)))
	frame = append(frame, afterSubs...)
	if _, err := c.stdin.Write(frame); err != nil {
		return childReport{}, c.died(err)
	}
	type answer struct {
		rep childReport
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		var a answer
		line, err := c.stdout.ReadString('\n')
		if err == nil {
			var connected int
			if _, serr := fmt.Sscanf(line, "ok %d %d\n", &connected, &a.rep.delivered); serr != nil {
				err = fmt.Errorf("the child answered %q", line)
			}
			a.rep.connected = connected == 1
		}
		a.err = err
		answers <- a
	}()
	select {
	case a := <-answers:
		if a.err != nil {
			return childReport{}, c.died(a.err)
		}
		return a.rep, nil
	case <-time.After(childSessionWait):
		return childReport{}, c.died(errors.New("the session did not end in time"))
	}
}

// died reports how the child ended, with the end of what it wrote.
func (c *natsGoChild) died(err error) error {
	c.kill()
	out := c.stderr.String()
	if len(out) > 4096 {
		out = out[:4096]
	}
	return fmt.Errorf("the nats.go child died (%v, %v):\n%s", err, c.cmd.ProcessState, out)
}

func (c *natsGoChild) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runNatsGoChild is the child's main: sessions from stdin until it
// closes. A session that breaks nats.go ends the process, which is what
// the parent looks for.
func runNatsGoChild() int {
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: childAddressSpace, Max: childAddressSpace}); err != nil {
		fmt.Fprintln(os.Stderr, "RLIMIT_AS:", err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	in := bufio.NewReader(os.Stdin)
	for {
		mode, err := in.ReadByte()
		if err != nil {
			return 0 // the parent is done
		}
		before, err1 := readFrame(in)
		after, err2 := readFrame(in)
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "a truncated frame")
			return 2
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		allocated := m.TotalAlloc
		connected, delivered := childSession(ln, mode, before, after)
		runtime.ReadMemStats(&m)
		if grew := m.TotalAlloc - allocated; grew > childSessionAlloc {
			fmt.Fprintf(os.Stderr, "runaway memory: the session allocated %d MiB\n", grew>>20)
			return 3
		}
		c := 0
		if connected {
			c = 1
		}
		if _, err := fmt.Fprintf(os.Stdout, "ok %d %d\n", c, delivered); err != nil {
			return 2
		}
	}
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

// childSession connects a client to a fake server on ln (fakeServe) and
// subscribes twice: a callback on ">" (sid 1) and, through a request, the
// request mux (sid 2). The callback looks at each message's subject,
// reply, headers and data. Once the server's PONG to a flush came (it
// comes after everything else), the subscription is drained so that every
// message given to it has reached the callback.
func childSession(ln net.Listener, mode byte, before, after []byte) (connected bool, delivered int) {
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		fakeServe(c, before, after)
	}()
	opts := []nats.Option{nats.NoReconnect(), nats.Timeout(2 * time.Second)}
	if mode == sessionGuarded {
		opts = append(opts, GuardOptions(Guard{Largest: MaxSystemReply})...)
	} else {
		// As behind the guard, without it: nats.go does no TLS of its
		// own, no host lookup, and dials no discovered server.
		opts = append(opts, nats.SetCustomDialer(handshakenDialer{}), nats.SkipHostLookup(), nats.IgnoreDiscoveredServers())
	}
	nc, err := nats.Connect("nats://"+ln.Addr().String(), opts...)
	var got atomic.Int32
	if err == nil {
		connected = true
		sub, serr := nc.Subscribe(">", func(m *nats.Msg) {
			_ = len(m.Subject) + len(m.Reply) + len(m.Data) + len(m.Header.Get("Nats-Expected-Stream")) + len(m.Header.Get("Status"))
			got.Add(1)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		requested := make(chan struct{})
		go func() {
			defer close(requested)
			_, _ = nc.RequestWithContext(ctx, "$JS.API.INFO", nil)
		}()
		if serr == nil && nc.FlushTimeout(2*time.Second) == nil && sub.Drain() == nil {
			deadline := time.Now().Add(2 * time.Second)
			for sub.IsValid() && !nc.IsClosed() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		cancel()
		<-requested
		nc.Close()
	}
	<-served
	return connected, int(got.Load())
}

// handshakenDialer dials TCP and tells nats.go to skip its TLS handshake,
// as the guard's dialer does (it made the handshake itself).
type handshakenDialer struct{}

func (handshakenDialer) Dial(network, address string) (net.Conn, error) {
	return net.DialTimeout(network, address, 2*time.Second)
}

func (handshakenDialer) SkipTLSHandshake() bool { return true }

// fakeServe writes before; with nothing after, it hangs up. Otherwise it
// waits for the client's two SUBs (or a second), writes after, answers
// the client's later PINGs (not the first, CONNECT's: before answers that
// one, or nothing does) and hangs up when the client does.
func fakeServe(c net.Conn, before, after []byte) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(8 * time.Second))
	if _, err := c.Write(before); err != nil || len(after) == 0 {
		return
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	subs, pings := 0, -1
	count := func(line string) {
		switch {
		case strings.HasPrefix(line, "SUB "):
			subs++
		case line == "PING\r\n":
			pings++
		}
	}
	wait := time.After(time.Second)
waitSubs:
	for subs < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				return
			}
			count(line)
		case <-wait:
			break waitSubs
		}
	}
	if _, err := c.Write(after); err != nil {
		return
	}
	for {
		for ; pings > 0; pings-- {
			if _, err := c.Write([]byte("PONG\r\n")); err != nil {
				return
			}
		}
		line, ok := <-lines
		if !ok {
			return
		}
		count(line)
	}
}
