package natsmon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// AccountUsage is what one account holds on a cluster: its connections,
// as its servers report them to the system account, and its JetStream
// usage, as JetStream reports it to a user of the account.
type AccountUsage struct {
	// Connections are its client connections, summed over the servers.
	Connections int64
	// Answered is how many servers answered the connection count.
	Answered int
	// JetStream is nil when not read.
	JetStream *AccountJetStream
}

// AccountJetStream is an account's JetStream usage, cluster-wide.
type AccountJetStream struct {
	Memory    int64 `json:"memory"`
	Storage   int64 `json:"storage"`
	Streams   int64 `json:"streams"`
	Consumers int64 `json:"consumers"`
}

// The direct account requests of the system account: each server answers
// for itself, and STATZ with include_unused answers even from a server
// where the account has no connection.
const (
	accountStatzSubject = "$SYS.REQ.ACCOUNT.%s.STATZ"
	accountStatzRequest = `{"include_unused":true}`
)

// maxAccountAnswers bounds the answers to one account request held at
// once: a real answer is under 1 KiB; 1 MiB holds a hundred servers'
// with room, and what a server the operator does not run sends past it
// is dropped (a slow consumer), counting as no answer.
const maxAccountAnswers = 1 << 20

// FetchAccountConnections asks the servers behind nc, a system account
// connection, for account's connections: expected answers, or what came
// within wait. account is a public key the caller checked.
func FetchAccountConnections(ctx context.Context, nc *nats.Conn, account string, expected int, wait time.Duration) (AccountUsage, error) {
	var u AccountUsage
	err := collect(ctx, nc, fmt.Sprintf(accountStatzSubject, account), accountStatzRequest, expected, wait, func(data []byte) {
		if conns, ok := decodeAccountStatz(data, account); ok {
			u.Connections += conns
			u.Answered++
		}
	})
	return u, err
}

// maxAccountInfo bounds JetStream's account info reply: its usage, limits
// and API counters, under 2 KiB.
const maxAccountInfo = 64 << 10

// FetchAccountJetStream asks JetStream, through nc, a connection of a user
// of the account, for the account's usage ($JS.API.INFO): memory and
// storage (every replica counted), streams and consumers.
// The request is collected as the STATZ answers are (one answer, its
// pending bytes bounded and reserved), not through nats.go's shared reply
// subscription, whose pending messages no one bounds.
func FetchAccountJetStream(ctx context.Context, nc *nats.Conn) (*AccountJetStream, error) {
	u, uerr := (*AccountJetStream)(nil), errors.New("JetStream did not answer for the account")
	err := collect(ctx, nc, "$JS.API.INFO", "", 1, 2*time.Second, func(data []byte) {
		u, uerr = decodeAccountInfo(data)
	})
	if err != nil {
		return nil, err
	}
	return u, uerr
}

// decodeAccountInfo reads JetStream's account info reply, bounded and
// checked: an error reply, a negative count or an oversized body is an
// error, never a usage.
func decodeAccountInfo(data []byte) (*AccountJetStream, error) {
	if len(data) > maxAccountInfo {
		return nil, errors.New("JetStream's account info is larger than any real one")
	}
	var reply struct {
		AccountJetStream
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &reply); err != nil {
		return nil, fmt.Errorf("JetStream's account info: %w", err)
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("JetStream's account info: %s", Shown(reply.Error.Description))
	}
	u := reply.AccountJetStream
	if u.Memory < 0 || u.Storage < 0 || u.Streams < 0 || u.Consumers < 0 {
		return nil, errors.New("JetStream's account info holds a negative count")
	}
	return &u, nil
}

// collect publishes body to subject and hands each answer to take, until
// expected answered or wait is over, with the pending answers bounded and
// reserved from the in-flight budget.
func collect(ctx context.Context, nc *nats.Conn, subject, body string, expected int, wait time.Duration, take func([]byte)) error {
	release, err := Reserve(ctx, maxAccountAnswers)
	if err != nil {
		return err
	}
	defer release()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(2*expected+1, maxAccountAnswers); err != nil {
		return err
	}
	if err := nc.PublishRequest(subject, inbox, []byte(body)); err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for got := 0; got < expected; got++ {
		m, err := sub.NextMsgWithContext(waitCtx)
		switch {
		case errors.Is(err, nats.ErrSlowConsumer):
			continue
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return nil // wait is over
		}
		take(m.Data)
	}
	return nil
}

// decodeAccountStatz reads one server's STATZ answer: the connections of
// account on it ("data"."account_statz"[]."conns" where "acc" is it).
func decodeAccountStatz(data []byte, account string) (conns int64, ok bool) {
	d := newJSONReader(bytes.NewReader(data), "account statz answer")
	err := d.Object(func(key []byte) error {
		if string(key) != "data" {
			return d.Skip()
		}
		if isNull, err := d.Null(); isNull || err != nil {
			return err
		}
		return d.Object(func(key []byte) error {
			if string(key) != "account_statz" {
				return d.Skip()
			}
			return d.Array(16, "accounts", func() error {
				var acc string
				var n int64
				err := d.Object(func(key []byte) error {
					var err error
					switch string(key) {
					case "acc":
						acc, err = d.String("account")
					case "conns":
						n, err = d.Int()
					default:
						err = d.Skip()
					}
					return err
				})
				if acc == account && n >= 0 {
					conns, ok = n, true
				}
				return err
			})
		})
	})
	if err == nil {
		err = d.End()
	}
	return conns, ok && err == nil
}
