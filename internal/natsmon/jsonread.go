package natsmon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonReader reads one JSON document from a stream, piece by piece, as its
// caller asks: it keeps nothing it was not asked for. A monitor body or a
// system account reply is untrusted, and the byte cap alone does not bound
// the memory a general decoder spends on it: encoding/json into
// nats-server's own types turns each `{}` of a 1 MiB stream_detail into a
// 320-byte struct (~270 MB). Here an unknown field is skipped byte by byte
// without being built, a kept array is refused past a count its caller
// chose, and nesting is refused past maxJSONDepth, so the memory a read
// holds is its small result and a 4 KiB buffer.
type jsonReader struct {
	r *bufio.Reader
	// body names the document in errors ("/jsz").
	body  string
	depth int
	// maxDepth is maxJSONDepth; a field so that a test can watch what the
	// reader would do without it.
	maxDepth int
	// key is scratch space for object keys, reused for each key.
	key []byte
}

// maxJSONDepth bounds nesting, kept or skipped. The deepest path the
// operator reads is data.account_details[].stream_detail[].consumer_detail[]
// .cluster.replicas[].name, 8 levels; the fields it skips nest a few more
// (a stream's config, its sources' external blocks). 32 leaves room for a
// newer server's additions and refuses a body of nested brackets before the
// recursion costs anything.
const maxJSONDepth = 32

// maxKeyLen is the longest key kept: every key the operator compares is
// shorter, and a metadata key longer than a name is refused; a longer key
// arrives empty and only its length is read.
const maxKeyLen = maxNameLen

// maxNameLen bounds one kept string (a server, stream, consumer or
// account name; a version). JetStream names are at most 255 bytes
// (nats-server's JSMaxNameLen).
const maxNameLen = 256

// maxNumberLen bounds a number's text: an int64 is 20 characters.
const maxNumberLen = 32

func newJSONReader(r io.Reader, body string) *jsonReader {
	return &jsonReader{r: bufio.NewReaderSize(r, 4096), body: body, maxDepth: maxJSONDepth, key: make([]byte, 0, maxKeyLen)}
}

// errorf is an error about the document.
func (d *jsonReader) errorf(format string, args ...any) error {
	return fmt.Errorf("the server's %s %s", d.body, fmt.Sprintf(format, args...))
}

// syntax is the error of a byte that cannot start or continue a value.
func (d *jsonReader) syntax(c byte, want string) error {
	return d.errorf("is not valid JSON: found %q where %s was expected", c, want)
}

// next returns the next byte that is not white space, without consuming
// it.
func (d *jsonReader) next() (byte, error) {
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, d.errorf("ends in the middle of a value")
			}
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, d.r.UnreadByte()
	}
}

// expect consumes c, the next byte that is not white space.
func (d *jsonReader) expect(c byte) error {
	got, err := d.next()
	if err != nil {
		return err
	}
	if got != c {
		return d.syntax(got, strconv.QuoteRune(rune(c)))
	}
	_, _ = d.r.ReadByte()
	return nil
}

// null consumes a null if one comes next, and reports whether it did.
func (d *jsonReader) null() (bool, error) {
	c, err := d.next()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, d.literal("null")
}

// literal consumes word (true, false, null), whose first byte is next.
func (d *jsonReader) literal(word string) error {
	for i := 0; i < len(word); i++ {
		c, err := d.r.ReadByte()
		if err != nil {
			return d.errorf("ends in the middle of a value")
		}
		if c != word[i] {
			return d.syntax(c, word)
		}
	}
	return nil
}

// enter and leave count nesting.
func (d *jsonReader) enter() error {
	d.depth++
	if d.depth > d.maxDepth {
		return d.errorf("nests deeper than %d levels", d.maxDepth)
	}
	return nil
}

func (d *jsonReader) leave() { d.depth-- }

// Object reads an object (or null), calling field for each key. field must
// consume the key's value: read it, or Skip it. The key is only valid
// during the call; a key longer than maxKeyLen arrives empty, which no
// caller knows.
func (d *jsonReader) Object(field func(key []byte) error) error {
	if isNull, err := d.null(); isNull || err != nil {
		return err
	}
	if err := d.expect('{'); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	c, err := d.next()
	if err != nil {
		return err
	}
	if c == '}' {
		_, _ = d.r.ReadByte()
		return nil
	}
	for {
		if err := d.readKey(); err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		if err := field(d.key); err != nil {
			return err
		}
		c, err := d.next()
		if err != nil {
			return err
		}
		_, _ = d.r.ReadByte()
		switch c {
		case ',':
		case '}':
			return nil
		default:
			return d.syntax(c, "',' or '}'")
		}
	}
}

// Array reads an array (or null), calling elem for each element, which
// must consume it. More than limit elements is an error that says the
// server lists more than limit of what.
func (d *jsonReader) Array(limit int, what string, elem func() error) error {
	if isNull, err := d.null(); isNull || err != nil {
		return err
	}
	if err := d.expect('['); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	c, err := d.next()
	if err != nil {
		return err
	}
	if c == ']' {
		_, _ = d.r.ReadByte()
		return nil
	}
	for n := 1; ; n++ {
		if n > limit {
			return d.errorf("lists more than %d %s", limit, what)
		}
		if err := elem(); err != nil {
			return err
		}
		c, err := d.next()
		if err != nil {
			return err
		}
		_, _ = d.r.ReadByte()
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return d.syntax(c, "',' or ']'")
		}
	}
}

// String reads a string (or null, which is ""), refusing one longer than
// maxNameLen bytes once decoded.
func (d *jsonReader) String(what string) (string, error) {
	if isNull, err := d.null(); isNull || err != nil {
		return "", err
	}
	var b []byte
	err := d.str(func(c byte) error {
		if len(b) == maxNameLen {
			return d.errorf("has a %s longer than %d bytes", what, maxNameLen)
		}
		b = append(b, c)
		return nil
	})
	return string(b), err
}

// Skip consumes one value of any kind, keeping none of it. Arrays skipped
// have no count limit: skipping an element costs no memory, and the byte
// cap bounds the time.
func (d *jsonReader) Skip() error {
	c, err := d.next()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return d.Object(func([]byte) error { return d.Skip() })
	case c == '[':
		return d.Array(int(^uint(0)>>1), "", d.Skip)
	case c == '"':
		return d.str(func(byte) error { return nil })
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		_, err := d.number()
		return err
	}
	return d.syntax(c, "a value")
}

// End checks that nothing but white space follows the document.
func (d *jsonReader) End() error {
	for {
		c, err := d.r.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return d.errorf("has more after its end")
	}
}
