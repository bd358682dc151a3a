package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/natsmon"
)

// ClaimsUpdateSubject takes an account JWT on every server of the
// operator, through the system account. The full resolver stores it and
// applies it at once: no restart, no reload.
const ClaimsUpdateSubject = "$SYS.REQ.CLAIMS.UPDATE"

// maxReply bounds one server's answer; a real one is under 200 bytes.
const maxReply = 4 << 10

// MaxMessage bounds one message on the account controller's connections
// (the protocol guard closes a connection that sends a larger one): a
// server's answer to a claims update (under 200 bytes), to an account's
// STATZ (under 1 KiB) and JetStream's account info (under 2 KiB). Each
// answer the controller holds is then at most this large, and what it
// holds at once is reserved from the operator's in-flight budget.
const MaxMessage = 64 << 10

// Push sends accountJWT through nc, a connection of the system account,
// and waits until every server named in servers took it (each answers for
// itself, under its server_name: its pod's name) or ctx ends. It returns
// how many of them took it. A server's refusal is an error, its text
// bounded and made printable; a JWT carries nothing secret, so the error
// may name the account.
func Push(ctx context.Context, nc *nats.Conn, accountJWT string, servers []string) (int, error) {
	expected := make(map[string]bool, len(servers))
	for _, s := range servers {
		expected[s] = true
	}
	// The channel holds the answers not yet read: nats.go drops what does
	// not fit (a slow consumer), so at most one answer of MaxMessage a
	// server, and the one being read, are held.
	release, err := natsmon.Reserve(ctx, int64(len(servers)+1)*MaxMessage)
	if err != nil {
		return 0, err
	}
	defer release()
	inbox := nc.NewRespInbox()
	replies := make(chan *nats.Msg, len(servers))
	sub, err := nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return 0, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(ClaimsUpdateSubject, inbox, []byte(accountJWT)); err != nil {
		return 0, err
	}
	// Answers are counted by server name, and only the expected servers':
	// one server's answer counted twice, or the answer of a server that
	// is not (or no longer) one of the cluster's ready pods, would stand
	// for the answer of one that never came.
	took := map[string]bool{}
	for len(took) < len(expected) {
		select {
		case <-ctx.Done():
			return len(took), fmt.Errorf("%d of %d servers took the account JWT: %w", len(took), len(expected), ctx.Err())
		case m := <-replies:
			if err := take(took, expected, m.Data); err != nil {
				return len(took), err
			}
		}
	}
	return len(took), nil
}

// take records one answer to a push in took: an expected server's
// acceptance counts once, its refusal is the push's error, and anything
// under a name not expected (or none) counts for nothing, a refusal
// included: only the cluster's ready servers speak for the push.
func take(took, expected map[string]bool, data []byte) error {
	server, err := claimsReply(data)
	switch {
	case !expected[server]:
		return nil
	case err != nil:
		return err
	}
	took[server] = true
	return nil
}

// claimsReply reads one server's answer to a claims update: the server's
// name and, when it did not take the JWT, an error (with the name when
// the answer gave one).
func claimsReply(data []byte) (string, error) {
	if len(data) > maxReply {
		return "", errors.New("a server answered the claims update with more than 4KiB")
	}
	var r struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Data *struct {
			Code int `json:"code"`
		} `json:"data"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("a server's answer to the claims update: %w", err)
	}
	if r.Error != nil {
		return r.Server.Name, fmt.Errorf("a server refused the account JWT: %s (code %d)", natsmon.Shown(r.Error.Description), r.Error.Code)
	}
	if r.Data == nil || r.Data.Code != 200 || r.Server.Name == "" {
		return r.Server.Name, errors.New("a server answered the claims update without taking it")
	}
	return r.Server.Name, nil
}
