package jetstream

import (
	"bytes"
	"testing"
)

// FuzzGuardAgainstNatsGo feeds random server streams to the guard and
// whatever it passes to a real nats.go connection in a child process
// (natsgo_child_test.go): any input whose passed bytes kill or hang the
// child fails, with the input. The child runs nats.go as the operator
// does behind the guard (a custom dialer that has done TLS, no host
// lookup, discovered servers ignored), under GOMEMLIMIT and RLIMIT_AS;
// then the same stream goes, as a server's, to nats.go behind the real
// guard (GuardOptions) in the child.
//
// Beside the crash it checks the guard's own properties: the output does
// not depend on how reads split the stream (catches a decoder that loses
// state across reads), and the output is canonical, a fixed point of the
// guard (catches an encoder that copies a server's byte through, which
// decoding again would re-encode differently).
//
// The seeds (testdata/fuzz/FuzzGuardAgainstNatsGo, made by
// TestWriteGuardFuzzSeeds) are real nats-server sessions and the known bad
// framings.
func FuzzGuardAgainstNatsGo(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte) {
		out, err := guardOutput(stream, len(stream)+1)
		split, splitErr := guardOutput(stream, 1+len(stream)%7)
		if !bytes.Equal(out, split) || (err == nil) != (splitErr == nil) {
			t.Fatalf("the guard's output depends on how reads split the stream:\nwhole: %q (%v)\nsplit: %q (%v)", out, err, split, splitErr)
		}
		again, againErr := guardOutput(out, len(out)+1)
		if againErr != nil || !bytes.Equal(again, out) {
			t.Fatalf("the guard's output is not its own fixed point:\n%q\nbecame %q (%v)", out, again, againErr)
		}
		before, after := splitAfterFirstPong(out)
		if err := runInNatsGoChild(sessionNatsGo, before, after); err != nil {
			t.Fatalf("nats.go died of what the guard passed.\nserver stream: %q\nguard output: %q\n%v", stream, out, err)
		}
		// The same stream from a server, to nats.go behind the guard's
		// dialer and connection as the operator uses them: catches glue
		// (the INFO read at dial time, Read after a broken limit) that
		// let through what protoStream alone would not.
		before, after = splitAfterFirstPong(stream)
		if err := runInNatsGoChild(sessionGuarded, before, after); err != nil {
			t.Fatalf("nats.go behind the guard died of a server stream.\nserver stream: %q\n%v", stream, err)
		}
	})
}

// guardOutput runs stream through a protoStream as the dial does (INFO
// first, the pool's message cap), chunk bytes a read, and returns every
// byte it encoded: even those of operations decoded in the read that
// broke a limit, which the connection drops (a superset of what nats.go
// can see).
func guardOutput(stream []byte, chunk int) ([]byte, error) {
	s := protoStream{maxMsg: maxAPIReply}
	r := &chunkReader{b: stream, chunk: chunk}
	var out []byte
	p := make([]byte, readChunk)
	for r.more() {
		_ = s.readFrom(r)
		err := s.decode()
		for s.pending() {
			out = append(out, p[:s.read(p)]...)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// chunkReader reads b at most chunk bytes at a time.
type chunkReader struct {
	b     []byte
	chunk int
}

func (r *chunkReader) more() bool { return len(r.b) > 0 }

func (r *chunkReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[:min(len(r.b), r.chunk)])
	r.b = r.b[n:]
	return n, nil
}

// splitAfterFirstPong splits a stream after the PONG that answers
// nats.go's connect: the child's fake server writes the first part on
// accept and the rest once the client has subscribed. The guard's own
// decoder finds it; a stream it cannot decode up to a PONG goes whole
// into the first part.
func splitAfterFirstPong(out []byte) (before, after []byte) {
	for at := 0; at < len(out); {
		op, n, err := parseServerOp(out[at:], maxAPIReply)
		if err != nil || n == 0 {
			break
		}
		at += n
		if op.kind == opPong {
			return out[:at], out[at:]
		}
	}
	return out, nil
}
