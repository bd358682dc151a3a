package natsmon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// AccountUsage is what one account holds on a cluster, as its servers
// report it to the system account.
type AccountUsage struct {
	// Connections are its client connections, summed over the servers.
	Connections int64
	// Memory and Storage are its JetStream bytes. Each server reports the
	// account's cluster-wide totals (its own and its peers' usage updates),
	// so the largest answer is the total, not the sum.
	Memory, Storage int64
	// Answered is how many servers answered the connection count.
	Answered int
}

// The direct account requests of the system account: each server answers
// for itself, and STATZ with include_unused answers even from a server
// where the account has no connection.
const (
	accountStatzSubject = "$SYS.REQ.ACCOUNT.%s.STATZ"
	accountJSZSubject   = "$SYS.REQ.ACCOUNT.%s.JSZ"
	accountStatzRequest = `{"include_unused":true}`
)

// maxAccountAnswers bounds the answers to one account request held at
// once: a real answer is under 1 KiB; 1 MiB holds a hundred servers'
// with room, and what a server the operator does not run sends past it
// is dropped (a slow consumer), counting as no answer.
const maxAccountAnswers = 1 << 20

// FetchAccountUsage asks the servers behind nc, a system account
// connection, for account's connections and JetStream usage: expected
// answers to each request, or what came within wait. account is a
// public key the caller checked.
func FetchAccountUsage(ctx context.Context, nc *nats.Conn, account string, expected int, wait time.Duration, jetStream bool) (AccountUsage, error) {
	var u AccountUsage
	err := collect(ctx, nc, subjectFor(accountStatzSubject, account), accountStatzRequest, expected, wait, func(data []byte) {
		if conns, ok := decodeAccountStatz(data, account); ok {
			u.Connections += conns
			u.Answered++
		}
	})
	if err != nil || !jetStream {
		return u, err
	}
	err = collect(ctx, nc, subjectFor(accountJSZSubject, account), `{}`, expected, wait, func(data []byte) {
		if mem, store, ok := decodeAccountJSZ(data); ok {
			u.Memory, u.Storage = max(u.Memory, mem), max(u.Storage, store)
		}
	})
	return u, err
}

func subjectFor(format, account string) string { return fmt.Sprintf(format, account) }

// collect publishes body to subject and hands each answer to take, until
// expected answered or wait is over, with the pending answers bounded and
// reserved from the in-flight budget.
func collect(ctx context.Context, nc *nats.Conn, subject, body string, expected int, wait time.Duration, take func([]byte)) error {
	release, err := reserve(ctx, maxAccountAnswers)
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

// decodeAccountJSZ reads one server's JSZ answer for an account: its
// JetStream memory and storage ("data"."memory", "data"."storage").
func decodeAccountJSZ(data []byte) (memory, storage int64, ok bool) {
	d := newJSONReader(bytes.NewReader(data), "account JetStream answer")
	err := d.Object(func(key []byte) error {
		if string(key) != "data" {
			return d.Skip()
		}
		if isNull, err := d.Null(); isNull || err != nil {
			return err
		}
		return d.Object(func(key []byte) error {
			var err error
			switch string(key) {
			case "memory":
				memory, err = d.Int()
				ok = true
			case "storage":
				storage, err = d.Int()
				ok = true
			default:
				err = d.Skip()
			}
			return err
		})
	})
	if err == nil {
		err = d.End()
	}
	return memory, storage, ok && err == nil && memory >= 0 && storage >= 0
}
