package jsonread

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The scalars of the bounded JSON reader: keys, strings, numbers, booleans
// and times, each within its limits.

// readKey reads an object key into d.key; a key longer than MaxKeyLen
// leaves d.key empty.
func (d *Reader) readKey() error {
	d.key = d.key[:0]
	long := false
	err := d.str(func(c byte) error {
		if len(d.key) == MaxKeyLen {
			long = true
		}
		if !long {
			d.key = append(d.key, c)
		}
		return nil
	})
	if long {
		d.key = d.key[:0]
	}
	return err
}

// str reads a string, handing each decoded byte to keep.
func (d *Reader) str(keep func(byte) error) error {
	if err := d.expect('"'); err != nil {
		return err
	}
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return d.Errorf("ends in the middle of a string")
		}
		switch {
		case c == '"':
			return nil
		case c < ' ':
			return d.Errorf("has a control character in a string")
		case c != '\\':
			if err := keep(c); err != nil {
				return err
			}
			continue
		}
		e, err := d.r.ReadByte()
		if err != nil {
			return d.Errorf("ends in the middle of a string")
		}
		var out []byte
		switch e {
		case '"', '\\', '/':
			out = []byte{e}
		case 'b':
			out = []byte{'\b'}
		case 'f':
			out = []byte{'\f'}
		case 'n':
			out = []byte{'\n'}
		case 'r':
			out = []byte{'\r'}
		case 't':
			out = []byte{'\t'}
		case 'u':
			r, err := d.hex4()
			if err != nil {
				return err
			}
			// A lone surrogate becomes U+FFFD, as in encoding/json; names
			// the operator keeps are shown through Shown anyway.
			out = utf8.AppendRune(nil, r)
		default:
			return d.syntax(e, "an escape")
		}
		for _, b := range out {
			if err := keep(b); err != nil {
				return err
			}
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (d *Reader) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, d.Errorf("ends in the middle of a string")
		}
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, d.syntax(c, "a hex digit")
		}
	}
	return r, nil
}

// Bool reads true, false or null (false).
func (d *Reader) Bool() (bool, error) {
	c, err := d.next()
	if err != nil {
		return false, err
	}
	switch c {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.syntax(c, "true or false")
}

// number reads a number's text (or null, which is "0").
func (d *Reader) number() (string, error) {
	if isNull, err := d.Null(); isNull || err != nil {
		return "0", err
	}
	var b []byte
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			break
		}
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			_ = d.r.UnreadByte()
			break
		}
		if len(b) == maxNumberLen {
			return "", d.Errorf("has a number longer than %d characters", maxNumberLen)
		}
		b = append(b, c)
	}
	if !validNumber(b) {
		return "", d.Errorf("is not valid JSON: %q is not a number", b)
	}
	return string(b), nil
}

// validNumber reports whether b is a number in JSON's grammar:
// -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch n := digits(); {
	case n == 0, n > 1 && b[i-n] == '0':
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// Int reads an integer (nats-server writes counts and durations as
// integers); anything else is an error.
func (d *Reader) Int() (int64, error) {
	s, err := d.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, d.Errorf("has %q where an integer was expected", s)
	}
	return n, nil
}

// Uint reads an unsigned integer.
func (d *Reader) Uint() (uint64, error) {
	s, err := d.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, d.Errorf("has %q where an unsigned integer was expected", s)
	}
	return n, nil
}

// Time reads a time as nats-server writes it (RFC 3339); null is the zero
// time.
func (d *Reader) Time(what string) (time.Time, error) {
	s, err := d.String(what)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, d.Errorf("has a %s that is not a time", what)
	}
	return t, nil
}

// Float reads a number as Prometheus holds it (nats-server writes a
// server's CPU share as a fraction).
func (d *Reader) Float() (float64, error) {
	s, err := d.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, d.Errorf("has %q where a number was expected", s)
	}
	return f, nil
}
