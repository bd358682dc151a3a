package natsmon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HealthQuery asks a server for its own verdict on every Raft group it is
// a member of: the meta group (is it current with the meta leader?), each
// stream and consumer replica it holds (is it caught up, has it applied
// what its leader sent?). "details" lists each problem with its kind and
// names, so that a message is made from fields, not from the server's
// free text.
const HealthQuery = "/healthz?details=true"

// maxHealthBody caps a /healthz answer: one error per stream and consumer
// replica the server holds, about 150 bytes each.
const maxHealthBody = 1 << 20

// maxReasonShown bounds the server's own wording of why a group is not
// current ("stream catching up", "JetStream is not current with the meta
// leader"), cut rather than refused.
const maxReasonShown = 80

// maxProblemText is as much of one problem's text as is kept.
const maxProblemText = 1024

// FetchOwnView reads one server's own verdict on whether it is current,
// at url (HealthQuery on its monitor address): "" when it says it is, or
// what it names first as not current. An answer that cannot be read is an
// error: only a server that said so counts as current.
func FetchOwnView(ctx context.Context, c *http.Client, url string) (string, error) {
	resp, done, err := get(ctx, c, url, maxHealthBody)
	if err != nil {
		return "", err
	}
	defer done()
	// An unhealthy server answers 503 with the same body as a healthy
	// one's 200: decodeBody, which refuses anything but 200, does not fit.
	body := &io.LimitedReader{R: resp.Body, N: maxHealthBody + 1}
	behind, err := DecodeOwnView(body, resp.StatusCode)
	if body.N <= 0 {
		return "", fmt.Errorf("/healthz: the answer is larger than %d bytes", maxHealthBody)
	}
	return behind, err
}

// healthProblem is one entry of /healthz's "errors".
type healthProblem struct {
	kind, account, stream, consumer, text string
}

// DecodeOwnView reads a /healthz?details=true answer given with HTTP
// status code: "" when the server says it is current (200, no errors), or
// the first thing it names as not current.
func DecodeOwnView(r io.Reader, code int) (string, error) {
	d := newJSONReader(r, "/healthz")
	var (
		status, text string
		first        *healthProblem
	)
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "status":
			status, err = d.String("status")
		case "error":
			text, err = d.Cut(maxProblemText)
		case "errors":
			err = d.Array(maxHealthBody, "health errors", func() error {
				if first != nil {
					return d.Skip() // one is enough to wait for; each costs nothing skipped
				}
				p, err := d.healthProblem()
				first = &p
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return "", err
	}
	switch {
	case first != nil:
		return first.describe(), nil
	case code == http.StatusOK && status == "ok":
		return "", nil
	case text != "":
		return shownWording(text, maxReasonShown), nil
	}
	return fmt.Sprintf("its /healthz answered %d (%s)", code, Shown(status)), nil
}

func (d *jsonReader) healthProblem() (healthProblem, error) {
	var p healthProblem
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			p.kind, err = d.String("health error type")
		case "account":
			p.account, err = d.String("account name")
		case "stream":
			p.stream, err = d.String("stream name")
		case "consumer":
			p.consumer, err = d.String("consumer name")
		case "error":
			// Two names of up to 255 bytes, then the reason.
			p.text, err = d.Cut(maxProblemText)
		default:
			err = d.Skip()
		}
		return err
	})
	return p, err
}

// describe says what is not current, from the problem's fields; of the
// server's text only the reason after the last ": " ("stream catching
// up", "group node unhealthy"), which follows the names in nats-server's
// wording.
func (p healthProblem) describe() string {
	reason := p.text
	if i := strings.LastIndex(reason, ": "); i >= 0 {
		reason = reason[i+2:]
	}
	reason = shownWording(reason, maxReasonShown)
	switch p.kind {
	case "STREAM":
		return fmt.Sprintf("stream %s is not current (%s)", Shown(p.stream), reason)
	case "CONSUMER":
		return fmt.Sprintf("consumer %s of stream %s is not current (%s)", Shown(p.consumer), Shown(p.stream), reason)
	}
	return shownWording(p.text, maxReasonShown)
}

// shownWording is Shown for a server's wording rather than a name: spaces
// stay, and it is cut at max bytes.
func shownWording(text string, max int) string {
	var b strings.Builder
	for _, word := range strings.Split(text, " ") {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if b.Len()+len(word) > max {
			b.WriteString("...")
			break
		}
		if word != "" {
			b.WriteString(Shown(word))
		}
	}
	return b.String()
}
