package jetstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// advisorySubject holds JetStream's advisories in the connection's account,
// on one subscription so that they are handled in the order the server
// sent them.
const advisorySubject = "$JS.EVENT.ADVISORY.>"

// configNews are the advisories that tell of a stream's or consumer's
// configuration or leadership changing. The others under advisorySubject
// are dropped: per-message ones (naks, terminated messages, exceeded
// deliveries) come at the rate of the traffic and are no news for the
// operator.
var configNews = []string{
	"$JS.EVENT.ADVISORY.STREAM.CREATED.",
	"$JS.EVENT.ADVISORY.STREAM.UPDATED.",
	"$JS.EVENT.ADVISORY.STREAM.DELETED.",
	"$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.",
	"$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.",
	"$JS.EVENT.ADVISORY.CONSUMER.CREATED.",
	"$JS.EVENT.ADVISORY.CONSUMER.DELETED.",
	"$JS.EVENT.ADVISORY.CONSUMER.PAUSE.",
	"$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.",
	"$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.",
}

// auditSubject carries the server's audit of every JetStream API call. The
// server sends no advisory when a consumer's configuration is updated, so
// other clients' consumer create-or-update calls are read from here.
const auditSubject = "$JS.EVENT.ADVISORY.API"

// subscribeAdvisories routes c's advisories to the pool.
func (p *Pool) subscribeAdvisories(c *Conn, nc *nats.Conn) error {
	sub, err := nc.Subscribe(advisorySubject, func(m *nats.Msg) {
		defer c.delivered.handled(m)
		if m.Subject == auditSubject {
			if addr, ok := consumerWrite(m.Data, nc); ok {
				p.advisory(c, addr, false)
			}
			return
		}
		for _, prefix := range configNews {
			if strings.HasPrefix(m.Subject, prefix) {
				p.advisory(c, advisoryAddress(m.Subject), ownable(m.Subject))
				return
			}
		}
	})
	if err != nil {
		return err
	}
	// Any client of the account may publish on the advisory subjects, at
	// any rate. The guard bounds what this subscription holds, counting
	// each message until the handler is done with it (guard_deliveries.go),
	// and drops the rest, waking the connection's users; nats.go must drop
	// nothing it counted, so its own limits are off.
	c.advisories = sub
	return sub.SetPendingLimits(-1, -1)
}

// advisory wakes the users on the connection whose server object lives at
// addr: for a stream, the stream's resource and its consumers' (a deleted
// or recreated stream concerns them); for a consumer, that consumer's. A
// user that expects the news of its own write (ownable) is not woken by it,
// once.
func (p *Pool) advisory(c *Conn, addr Address, ownable bool) {
	if addr.Stream == "" || p.OnChange == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	var wake []User
	for user := range p.byStream[streamOn{c, addr.Stream}] {
		u := p.users[user]
		if addr.Consumer != "" && u.addr.Consumer != addr.Consumer {
			continue
		}
		if ownable && u.addr == addr && now.Before(u.ownWrite) {
			u.ownWrite = time.Time{} // its own news, once
			p.users[user] = u
			continue
		}
		wake = append(wake, user)
	}
	p.mu.Unlock()
	p.wake(wake)
}

// ownable reports whether an advisory may be the news of a write of the
// pool's own: a creation or an update.
func ownable(subject string) bool {
	return strings.Contains(subject, ".CREATED.") || strings.Contains(subject, ".UPDATED.")
}

// ownWriteWindow is how long a user expects the news of its own write. The
// server sends it as the write completes; the window only bounds how long a
// lost one can hide another client's change (until the periodic resync).
const ownWriteWindow = 2 * time.Second

// ExpectOwnWrite tells the pool that user is about to create or update its
// server object: the advisory of that write is no news to it. Call
// OwnWriteFailed when the write fails, as it then sends none.
func (p *Pool) ExpectOwnWrite(user User) { p.setOwnWrite(user, time.Now().Add(ownWriteWindow)) }

// OwnWriteFailed withdraws ExpectOwnWrite.
func (p *Pool) OwnWriteFailed(user User) { p.setOwnWrite(user, time.Time{}) }

func (p *Pool) setOwnWrite(user User, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u, ok := p.users[user]; ok {
		u.ownWrite = until
		p.users[user] = u
	}
}

// advisoryAddress is what an advisory subject names, or a zero Address:
// $JS.EVENT.ADVISORY.STREAM.<event>.<stream> and
// $JS.EVENT.ADVISORY.CONSUMER.<event>.<stream>.<consumer>.
func advisoryAddress(subject string) Address {
	parts := strings.Split(subject, ".")
	if len(parts) < 6 || parts[0] != "$JS" || parts[1] != "EVENT" || parts[2] != "ADVISORY" {
		return Address{}
	}
	switch {
	case parts[3] == "STREAM":
		return Address{Stream: parts[5]}
	case parts[3] == "CONSUMER" && len(parts) >= 7:
		return Address{Stream: parts[5], Consumer: parts[6]}
	}
	return Address{}
}

// audit is the part of a JetStream API audit this package reads.
type audit struct {
	Subject string `json:"subject"`
	Client  *struct {
		ID     uint64 `json:"id"`
		Server string `json:"server"`
	} `json:"client"`
	Response string `json:"response"`
}

// consumerWrite reads an API audit and returns the consumer it wrote, when
// it is a successful consumer create or update made by another connection
// than nc (the pool's own writes are no news). A create subject without a
// consumer name addresses every consumer of its stream.
func consumerWrite(data []byte, nc *nats.Conn) (Address, bool) {
	// Most audits are of other calls (infos, the pool's own reads): skip
	// them without decoding their often long responses.
	if !bytes.Contains(data, []byte(`"subject":"$JS.API.CONSUMER.CREATE.`)) &&
		!bytes.Contains(data, []byte(`"subject":"$JS.API.CONSUMER.DURABLE.CREATE.`)) {
		return Address{}, false
	}
	var a audit
	if json.Unmarshal(data, &a) != nil {
		return Address{}, false
	}
	var rest string
	for _, prefix := range []string{"$JS.API.CONSUMER.CREATE.", "$JS.API.CONSUMER.DURABLE.CREATE."} {
		if r, ok := strings.CutPrefix(a.Subject, prefix); ok {
			rest = r
		}
	}
	if rest == "" || strings.Contains(a.Response, `"error"`) {
		return Address{}, false
	}
	if a.Client != nil {
		if id, err := nc.GetClientID(); err == nil && id == a.Client.ID && a.Client.Server == nc.ConnectedServerName() {
			return Address{}, false
		}
	}
	stream, consumer, _ := strings.Cut(rest, ".")
	consumer, _, _ = strings.Cut(consumer, ".") // CREATE.<stream>.<consumer>.<filter>
	return Address{Stream: stream, Consumer: consumer}, true
}
