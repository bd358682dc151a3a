package jetstream

import (
	"strconv"
	"strings"
	"testing"
)

// The greeting of the fake servers below: an INFO as nats-server writes
// it, and the PONG that answers the client's first PING.
const fakeGreeting = `INFO {"server_id":"FAKE","server_name":"fake","version":"2.15.3","proto":1,"headers":true,"max_payload":1048576} ` + "\r\nPONG\r\n"

// offByOneFraming is issue 17's first hole: a message whose payload is
// followed by one byte and '\n' (not CRLF). nats.go takes the byte after a
// payload without looking at it (here the '\n') and skips to the next
// '\n', so it skips the line "MSG _INBOX.x 1 <n>" that the old scanner
// (guard_scan.go, which skipped only to the first '\n') read as a message
// of n bytes; those n bytes are a MSG line of 10^15 bytes, which the old
// scanner passed as payload and nats.go parses: makeslice panics in its
// read loop.
func offByOneFraming() string {
	inner := "MSG _INBOX.x 1 1000000000000000\r\n"
	return "MSG _INBOX.x 1 1\r\nx\n" + "MSG _INBOX.x 1 " + strconv.Itoa(len(inner)) + "\r\n" + inner + "\r\n"
}

// TestOffByOneFramingKillsNatsGo: the bytes are a real threat, and the
// child sees it: unguarded, nats.go dies of them. (Catches a harness that
// cannot see a crash: every test below would pass against any guard.)
func TestOffByOneFramingKillsNatsGo(t *testing.T) {
	err := runInNatsGoChild(sessionNatsGo, []byte(fakeGreeting), []byte(offByOneFraming()))
	if err == nil {
		t.Fatal("nats.go survived the off-by-one framing unguarded: the child cannot tell")
	}
	if !strings.Contains(err.Error(), "makeslice") {
		t.Fatalf("the child died, but not of the allocation: %v", err)
	}
}

// TestGuardStopsTheOffByOneFraming: behind the guard, the same server
// leaves nats.go (and the process) alive.
//
// Run against the old guard (guard_scan.go and guard_conn.go of main at
// 73f4274, this file and natsgo_child_test.go beside them) it FAILS: the
// scanner passed the stream, and the child died with "panic: runtime
// error: makeslice: cap out of range" in nats.(*Conn).parse. It catches
// any guard that passes the server's framing through, however it checks
// it.
func TestGuardStopsTheOffByOneFraming(t *testing.T) {
	if err := runInNatsGoChild(sessionGuarded, []byte(fakeGreeting), []byte(offByOneFraming())); err != nil {
		t.Fatal(err)
	}
}

// TestGuardedNatsGoSurvivesBadFramings: every known bad framing, from a
// server behind the guard, leaves the child alive. Each names the
// careless guard it catches.
func TestGuardedNatsGoSurvivesBadFramings(t *testing.T) {
	huge := "MSG _INBOX.x 1 1000000000000000\r\n"
	for _, tc := range []struct{ name, stream string }{
		// A guard that checked only "MSG" lines in upper case: nats.go
		// reads the op in any case.
		{"a lower-case msg of 10^15", "msg _INBOX.x 1 1000000000000000\r\n"},
		// A guard that skipped after a payload to the next '\n' (the old
		// scanner): nats.go takes one byte first. Against the old guard
		// this case fails (makeslice in the child), the others pass.
		{"payload, one byte, LF", offByOneFraming()},
		// A guard that took "\r\n" to end the payload wherever it came.
		{"payload, LF, then the next line", "MSG _INBOX.x 1 1\r\nx\n" + huge},
		// A guard that read "PING" and skipped its line: nats.go's PING
		// state also ignores all up to '\n', but a guard that then
		// scanned a new op after "PING" would not.
		{"PING followed by a MSG on its line", "PINGMSG _INBOX.x 1 1000000000000000\r\n"},
		// A guard with a 64-bit size parser: nats.go's int64 wraps.
		{"a size that wraps to a small one", "MSG _INBOX.x 1 18446744073709551617\r\nxx\r\n"},
		// A guard that checked HMSG's header size but not the total.
		{"HMSG of 10^15", "HMSG _INBOX.x 1 12 1000000000000000\r\n"},
		// A guard that waited without bound for a line to end.
		{"an endless -ERR", "-ERR '" + strings.Repeat("e", 2*maxProtoLine)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := runInNatsGoChild(sessionGuarded, []byte(fakeGreeting), []byte(tc.stream)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNatsGoChildSeesASession: the child's client connects and its
// callback gets the messages of a well-framed session, guarded or not.
// (Catches a harness whose client never reaches its read loop: it would
// survive any bytes.)
func TestNatsGoChildSeesASession(t *testing.T) {
	msgs := "MSG a.b 1 5\r\nhello\r\nHMSG a.c 1 _INBOX.r 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\nPING\r\n"
	for _, mode := range []byte{sessionNatsGo, sessionGuarded} {
		rep, err := runInNatsGoChildReport(mode, []byte(fakeGreeting), []byte(msgs))
		if err != nil {
			t.Fatal(err)
		}
		if !rep.connected || rep.delivered != 2 {
			t.Fatalf("mode %d: %+v, want connected and 2 messages delivered", mode, rep)
		}
	}
}

// TestNatsGoChildSeesRunawayMemory: a session that makes nats.go allocate
// hundreds of MiB, or more than the address-space limit, ends the child,
// and the parent says so. (Catches a harness whose limits are not set: a
// guard that passed a size of 300 MB or 10 GB would pass the fuzz.)
func TestNatsGoChildSeesRunawayMemory(t *testing.T) {
	for _, tc := range []struct{ size, want string }{
		{"300000000", "runaway memory"},
		{"10000000000", "out of memory"},
	} {
		err := runInNatsGoChild(sessionNatsGo, []byte(fakeGreeting), []byte("MSG _INBOX.x 1 "+tc.size+"\r\nxx"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a message of %s bytes: %v, want the child dead of %q", tc.size, err, tc.want)
		}
	}
}
