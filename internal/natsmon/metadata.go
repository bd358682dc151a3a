package natsmon

import "bytes"

// maxMetadata bounds server_metadata as read back (/varz, a reload's
// answer): the operator writes a few marks of its own and spec.config may
// add some; a server that lists more is not running what the operator
// wrote, and a million tiny keys would be a million map entries.
const maxMetadata = 256

// metadata reads a server_metadata object into into.
func (d *jsonReader) metadata(into map[string]string) error {
	return d.Object(func(key []byte) error {
		if len(into) == maxMetadata {
			return d.Errorf("lists more than %d metadata entries", maxMetadata)
		}
		if len(key) == 0 {
			return d.Errorf("has a metadata key that is empty or longer than %d bytes", maxKeyLen)
		}
		k := string(key)
		v, err := d.String("metadata value")
		into[k] = v
		return err
	})
}

// ReloadAnswer is what a server's answer to a reload request says.
type ReloadAnswer struct {
	// Metadata is the server's server_metadata after the reload.
	Metadata map[string]string
	// Refused: the server answered with an error, whose Code this is.
	Refused bool
	Code    int
}

// DecodeReloadAnswer reads a server's answer to $SYS.REQ.SERVER.<id>.RELOAD:
// {"server": {..., "metadata": {...}}, "error": {"code": ...}}.
func DecodeReloadAnswer(data []byte) (ReloadAnswer, error) {
	d := newJSONReader(bytes.NewReader(data), "reload answer")
	a := ReloadAnswer{Metadata: map[string]string{}}
	err := d.Object(func(key []byte) error {
		switch string(key) {
		case "server":
			return d.Object(func(key []byte) error {
				if string(key) != "metadata" {
					return d.Skip()
				}
				return d.metadata(a.Metadata)
			})
		case "error":
			if isNull, err := d.Null(); isNull || err != nil {
				return err
			}
			a.Refused = true
			return d.Object(func(key []byte) error {
				if string(key) != "code" {
					return d.Skip()
				}
				n, err := d.Int()
				a.Code = int(n)
				return err
			})
		}
		return d.Skip()
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return ReloadAnswer{}, err
	}
	return a, nil
}
