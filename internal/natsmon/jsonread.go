package natsmon

import (
	"io"

	"github.com/kubenats/kubenats/internal/jsonread"
)

// jsonReader is the bounded streaming reader every server body goes
// through (package jsonread, shared with the metrics container); natsmon's
// decoders are methods of it.
type jsonReader struct{ *jsonread.Reader }

func newJSONReader(r io.Reader, body string) *jsonReader {
	return &jsonReader{jsonread.New(r, body)}
}

// The reader's bounds on a kept key and name, as natsmon's limits and
// errors name them.
const (
	maxKeyLen  = jsonread.MaxKeyLen
	maxNameLen = jsonread.MaxNameLen
)
