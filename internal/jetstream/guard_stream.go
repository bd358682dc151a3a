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
}

// readFrom reads once from r into s.in, growing it as the operation being
// received needs (parseServerOp has bounded that).
func (s *protoStream) readFrom(r io.Reader) error {
	if cap(s.in)-len(s.in) < readChunk {
		// Doubling, up to what the largest operation and one read take.
		size := min(2*cap(s.in)+readChunk, s.maxMsg+maxProtoLine+2+readChunk)
		grown := make([]byte, len(s.in), max(size, len(s.in)+readChunk))
		copy(grown, s.in)
		s.in = grown
	}
	n, err := r.Read(s.in[len(s.in):cap(s.in)])
	s.in = s.in[:len(s.in)+n]
	return err
}

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
		if s.out, err = appendServerOp(s.out, &op); err != nil {
			return err
		}
		done += n
	}
	rest := len(s.in) - done
	if rest == 0 && cap(s.in) > keepBuffer {
		s.in = nil
	} else {
		s.in = s.in[:copy(s.in, s.in[done:])]
	}
	return nil
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
