package natsconf

import (
	"bytes"
	"strings"
)

// indentUnit is one nesting level. Two spaces keep deep passthrough blocks
// readable in `kubectl get configmap -o yaml`.
const indentUnit = "  "

// confWriter appends nats.conf lines with consistent indentation. It only
// lays text out: every key and value it receives is already formatted and
// checked, so it cannot fail.
type confWriter struct {
	buf   bytes.Buffer
	depth int
}

// comment writes a `# text` line.
func (w *confWriter) comment(text string) {
	w.line("# " + text)
}

// keyValue writes `key: value`.
func (w *confWriter) keyValue(key, value string) {
	w.line(key + ": " + value)
}

// openBlock writes `key {` and nests what follows.
func (w *confWriter) openBlock(key string) {
	w.line(key + " {")
	w.depth++
}

// openAnonymousBlock writes a bare `{`, used for a map inside an array.
func (w *confWriter) openAnonymousBlock() {
	w.line("{")
	w.depth++
}

// closeBlock ends the innermost block.
func (w *confWriter) closeBlock() {
	w.depth--
	w.line("}")
}

// openArray writes `key: [` and nests what follows. Array items go one per
// line; the lexer accepts a newline as the item separator, so no commas are
// needed and a reordered list shows as a clean diff.
func (w *confWriter) openArray(key string) {
	w.line(key + ": [")
	w.depth++
}

// openAnonymousArray writes a bare `[`, used for an array inside an array.
func (w *confWriter) openAnonymousArray() {
	w.line("[")
	w.depth++
}

// arrayItem writes one scalar array element on its own line.
func (w *confWriter) arrayItem(value string) {
	w.line(value)
}

// closeArray ends the innermost array.
func (w *confWriter) closeArray() {
	w.depth--
	w.line("]")
}

// line writes text at the current depth, followed by a newline.
func (w *confWriter) line(text string) {
	w.buf.WriteString(strings.Repeat(indentUnit, w.depth))
	w.buf.WriteString(text)
	w.buf.WriteByte('\n')
}

// bytes returns everything written so far.
func (w *confWriter) bytes() []byte {
	return w.buf.Bytes()
}
