package status

import "unicode/utf8"

// MaxMessage bounds a condition message. Messages carry what servers and
// parsers said, which a tenant can make as long as it likes (a config with
// a thousand mistakes, a server that answers with a novel); the API server
// would refuse a status past 32 KiB, and an event note past 1 KiB, so the
// status write itself would fail. 1 KiB says enough.
const MaxMessage = 1024

// truncated is what a cut message ends with.
const truncated = " [...]"

// BoundMessage returns msg cut to at most MaxMessage bytes, on a rune
// boundary, marked as cut.
func BoundMessage(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	cut := MaxMessage - len(truncated)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + truncated
}
