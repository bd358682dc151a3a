package jsonread

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Reader is one document being read.
type Reader struct {
	r *bufio.Reader
	// body names the document in errors ("/jsz").
	body  string
	depth int
	// MaxDepth is maxDepth unless a test changes it, to watch what the
	// reader would do without it.
	MaxDepth int
	// key is scratch space for object keys, reused for each key.
	key []byte
}

// maxDepth bounds nesting, kept or skipped. The deepest path the
// operator reads is data.account_details[].stream_detail[].consumer_detail[]
// .cluster.replicas[].name, 8 levels; the fields it skips nest a few more
// (a stream's config, its sources' external blocks). 32 leaves room for a
// newer server's additions and refuses a body of nested brackets before the
// recursion costs anything.
const maxDepth = 32

// MaxKeyLen is the longest key kept: every key a caller compares is
// shorter, and a metadata key longer than a name is refused; a longer key
// arrives empty and only its length is read.
const MaxKeyLen = MaxNameLen

// MaxNameLen bounds one kept string (a server, stream, consumer or
// account name; a version). JetStream names are at most 255 bytes
// (nats-server's JSMaxNameLen).
const MaxNameLen = 256

// maxNumberLen bounds a number's text: an int64 is 20 characters.
const maxNumberLen = 32

// New reads the document r carries; body names it in errors ("/jsz").
func New(r io.Reader, body string) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 4096), body: body, MaxDepth: maxDepth, key: make([]byte, 0, MaxKeyLen)}
}

// Errorf is an error about the document.
func (d *Reader) Errorf(format string, args ...any) error {
	return fmt.Errorf("the server's %s %s", d.body, fmt.Sprintf(format, args...))
}

// syntax is the error of a byte that cannot start or continue a value.
func (d *Reader) syntax(c byte, want string) error {
	return d.Errorf("is not valid JSON: found %q where %s was expected", c, want)
}

// next returns the next byte that is not white space, without consuming
// it.
func (d *Reader) next() (byte, error) {
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, d.Errorf("ends in the middle of a value")
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
func (d *Reader) expect(c byte) error {
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

// Null consumes a null if one comes next, and reports whether it did.
func (d *Reader) Null() (bool, error) {
	c, err := d.next()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, d.literal("null")
}

// literal consumes word (true, false, null), whose first byte is next.
func (d *Reader) literal(word string) error {
	for i := 0; i < len(word); i++ {
		c, err := d.r.ReadByte()
		if err != nil {
			return d.Errorf("ends in the middle of a value")
		}
		if c != word[i] {
			return d.syntax(c, word)
		}
	}
	return nil
}

// enter and leave count nesting.
func (d *Reader) enter() error {
	d.depth++
	if d.depth > d.MaxDepth {
		return d.Errorf("nests deeper than %d levels", d.MaxDepth)
	}
	return nil
}

func (d *Reader) leave() { d.depth-- }

// Object reads an object (or null), calling field for each key. field must
// consume the key's value: read it, or Skip it. The key is only valid
// during the call; a key longer than MaxKeyLen arrives empty, which no
// caller knows.
func (d *Reader) Object(field func(key []byte) error) error {
	if isNull, err := d.Null(); isNull || err != nil {
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
func (d *Reader) Array(limit int, what string, elem func() error) error {
	if isNull, err := d.Null(); isNull || err != nil {
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
			return d.Errorf("lists more than %d %s", limit, what)
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
// MaxNameLen bytes once decoded.
func (d *Reader) String(what string) (string, error) {
	if isNull, err := d.Null(); isNull || err != nil {
		return "", err
	}
	var b []byte
	err := d.str(func(c byte) error {
		if len(b) == MaxNameLen {
			return d.Errorf("has a %s longer than %d bytes", what, MaxNameLen)
		}
		b = append(b, c)
		return nil
	})
	return string(b), err
}

// Skip consumes one value of any kind, keeping none of it. Arrays skipped
// have no count limit: skipping an element costs no memory, and the byte
// cap bounds the time.
func (d *Reader) Skip() error {
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
func (d *Reader) End() error {
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
		return d.Errorf("has more after its end")
	}
}
