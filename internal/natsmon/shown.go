package natsmon

import "strings"

// maxShown bounds one name a server supplied (a stream, a consumer, a
// peer) in a message: JetStream's own names are shorter in practice, and
// a status message of 1 KiB (status.MaxMessage) must still say what the
// problem is rather than carry one name of a hostile server's choosing.
const maxShown = 64

// Shown is a name a server supplied, fit for a status message: bytes
// other than printable ASCII (control characters, newlines, quotes,
// anything that could pass for other text) become '?', and a name longer
// than maxShown is cut and marked. Real JetStream names, which are
// printable and short, are shown unchanged.
func Shown(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if b.Len() == maxShown {
			b.WriteString("...")
			break
		}
		c := name[i]
		if c <= ' ' || c > '~' || c == '"' || c == '\'' || c == '`' || c == '\\' {
			c = '?'
		}
		b.WriteByte(c)
	}
	if b.Len() == 0 {
		return `""`
	}
	return b.String()
}
