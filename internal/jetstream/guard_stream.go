package jetstream

import "io"

const (
	// readChunk is how much one read from the server asks for, as
	// nats.go's own reader does (32 KiB).
	readChunk = 32 << 10
	// keepBuffer: a buffer that grew past this for one large message is
	// let go once it is empty, so that an idle connection holds little.
	keepBuffer = 64 << 10
)

// protoStream turns the bytes a server sends into the bytes nats.go
// reads: whole operations are decoded (parseServerOp) and re-encoded
// (appendServerOp); nothing else passes. Its memory is bounded by two
// copies of one operation (a control line, or a message up to maxMsg, as
// received and as encoded) plus one read, and falls back to a few KiB
// once that operation has been read.
//
// What it holds beyond keepBuffer is paid for in the server memory budget
// before it is read (wire): an operation that needs more than its
// connection may take then is refused, never buffered (errNoRoom).
type protoStream struct {
	maxMsg int
	// in holds received bytes not yet decoded; out, encoded bytes nats.go
	// has not read yet, from outPos on.
	in     []byte
	out    []byte
	outPos int
	// infoSeen: a NATS server starts with INFO, and nothing else is
	// taken before one.
	infoSeen bool
	// admit, when set, says which messages nats.go gets (deliveries);
	// the others are dropped here.
	admit func(*serverOp) bool
	// need is the size of the operation at the head of in once its line
	// is whole and the rest is not: in grows to it at once, its room
	// reserved first.
	need int
	// wire is the connection's share of the server memory budget; nil:
	// nothing is reserved (the decoder's own tests).
	wire *wireLease
}

// readFrom reads once from r into s.in, growing it as the operation being
// received needs (parseServerOp has bounded that), once the room is
// reserved.
func (s *protoStream) readFrom(r io.Reader) error {
	if size := s.capWanted(); size > cap(s.in) {
		if !s.wire.hold(wireCost(size)) {
			return errNoRoom
		}
		grown := make([]byte, len(s.in), size)
		copy(grown, s.in)
		s.in = grown
	}
	n, err := r.Read(s.in[len(s.in):cap(s.in)])
	s.in = s.in[:len(s.in)+n]
	return err
}

// capWanted is the capacity s.in needs for the next read: the whole
// operation at its head when its size is known (one allocation, of what
// its line announced, and nothing read past it), else one read more (a
// control line, which parseServerOp bounds by maxProtoLine).
func (s *protoStream) capWanted() int {
	switch {
	case s.need > cap(s.in):
		return s.need
	case s.need == 0 && cap(s.in)-len(s.in) < readChunk:
		return len(s.in) + readChunk
	}
	return cap(s.in)
}

// settle lowers the stream's reservation to what it still holds: called
// when nats.go comes back for more, having taken all it was handed (its
// copy is now its own, queued under a reader's reservation, or dropped).
func (s *protoStream) settle() { s.wire.hold(wireCost(cap(s.in))) }

// feed appends b to what was received: for bytes read outside readFrom.
func (s *protoStream) feed(b []byte) { s.in = append(s.in, b...) }

// decode decodes every whole operation received and encodes it for
// nats.go. On an error the stream is broken: the caller closes the
// connection.
func (s *protoStream) decode() error {
	done := 0
	for {
		op, n, err := parseServerOp(s.in[done:], s.maxMsg)
		if err != nil {
			return err
		}
		if n == 0 {
			s.need = op.need
			break
		}
		if !s.infoSeen && op.kind != opInfo {
			return errNoInfo
		}
		s.infoSeen = true
		if (op.kind == opMsg || op.kind == opHMsg) && s.admit != nil && !s.admit(&op) {
			done += n
			continue
		}
		s.out = roomFor(s.out, len(s.in)-done)
		if s.out, err = appendServerOp(s.out, &op); err != nil {
			return err
		}
		done += n
	}
	if done > 0 && cap(s.in) > keepBuffer {
		// The large buffer goes with the operation it held, whose copy
		// nats.go is about to read: received and encoded, one message is
		// held twice at most, never three times.
		s.in = append([]byte(nil), s.in[done:]...)
	} else {
		s.in = s.in[:copy(s.in, s.in[done:])]
	}
	return nil
}

// roomFor grows out, when it must, to hold n more bytes and no more:
// re-encoded, what is left of s.in takes at most as many bytes as it
// does (canonical framing is never longer than the server's), so out
// stays within what the reservation paid for, where append would round up.
func roomFor(out []byte, n int) []byte {
	if cap(out)-len(out) >= n {
		return out
	}
	grown := make([]byte, len(out), len(out)+n)
	copy(grown, out)
	return grown
}

// pending reports whether encoded bytes wait for nats.go.
func (s *protoStream) pending() bool { return s.outPos < len(s.out) }

// read hands nats.go encoded bytes.
func (s *protoStream) read(p []byte) int {
	n := copy(p, s.out[s.outPos:])
	s.outPos += n
	if s.outPos == len(s.out) {
		s.outPos = 0
		if cap(s.out) > keepBuffer {
			s.out = nil
		} else {
			s.out = s.out[:0]
		}
	}
	return n
}
