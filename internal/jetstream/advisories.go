package jetstream

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

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

// auditSubject carries the server's audit of every JetStream API call. It
// names the connection that made the call. The server sends no advisory
// when a consumer's configuration is updated, so consumer create-or-update
// calls are read from here; and a stream's or consumer's create or update
// by another connection marks the object written by someone else
// (TakeForeignWrite).
const auditSubject = "$JS.EVENT.ADVISORY.API"

// subscribeAdvisories routes c's advisories to the pool.
//
// Every piece of news wakes the resources it concerns, the news of the
// pool's own writes included: the pass it starts reads the server object
// (one info request) and writes only when it differs. Nothing is taken for
// the news of an own write, so nothing another client does can hide behind
// one (docs/jetstream.md, "Drift").
func (p *Pool) subscribeAdvisories(c *Conn, nc *nats.Conn) error {
	sub, err := nc.Subscribe(advisorySubject, func(m *nats.Msg) {
		defer c.delivered.handled(m)
		if m.Subject == auditSubject {
			if w, ok := writeAudit(m.Data, nc); ok {
				if w.foreign {
					p.foreignWrite(c, w)
				}
				p.advisory(c, w.addr)
			}
			return
		}
		for _, prefix := range configNews {
			if strings.HasPrefix(m.Subject, prefix) {
				p.advisory(c, advisoryAddress(m.Subject))
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
	// While the connection was down the server's news went nowhere: once
	// nats.go is back (its subscriptions sent again first), every user
	// looks at its object again.
	nc.SetReconnectHandler(func(*nats.Conn) { p.wakeUsersOf(c) })
	return sub.SetPendingLimits(-1, -1)
}

// advisory wakes the users on the connection whose server object lives at
// addr: for a stream, the stream's resource and its consumers' (a deleted
// or recreated stream concerns them); for a consumer, that consumer's.
func (p *Pool) advisory(c *Conn, addr Address) {
	if addr.Stream == "" || p.OnChange == nil {
		return
	}
	p.mu.Lock()
	var wake []User
	for user := range p.byStream[streamOn{c, addr.Stream}] {
		if addr.Consumer != "" && p.users[user].addr.Consumer != addr.Consumer {
			continue
		}
		wake = append(wake, user)
	}
	p.mu.Unlock()
	p.wake(wake)
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

// audit is the part of a JetStream API audit this package reads: the
// subject of the call and the connection that made it, as nats-server
// 2.14 and 2.15 write them (JSAPIAudit, its ClientInfo's id and server).
type audit struct {
	Subject string `json:"subject"`
	Client  *struct {
		ID     uint64 `json:"id"`
		Server string `json:"server"`
	} `json:"client"`
}

// write is a create or update call an audit tells of.
type write struct {
	addr Address
	// consumer: a consumer call (one without a consumer name concerns
	// every consumer of the stream).
	consumer bool
	// foreign: made by another connection than the pool's own.
	foreign bool
}

// writeCalls are the API subjects of the calls that create or update a
// stream's or consumer's configuration.
var writeCalls = []struct {
	prefix   string
	consumer bool
}{
	{"$JS.API.STREAM.CREATE.", false},
	{"$JS.API.STREAM.UPDATE.", false},
	{"$JS.API.CONSUMER.CREATE.", true},
	{"$JS.API.CONSUMER.DURABLE.CREATE.", true},
}

// writeAudit reads an API audit and returns the create or update call it
// tells of, whatever the server answered (the pass it starts compares, so a
// call that changed nothing costs one read). It is foreign unless it names
// nc, on the server nc is connected to, as the caller.
func writeAudit(data []byte, nc *nats.Conn) (write, bool) {
	// Most audits are of other calls (infos, the pool's own reads): skip
	// them without decoding their often long responses. The server writes
	// the subject with encoding/json, which leaves '$' and '.' as they are.
	if !slices.ContainsFunc(writeCalls, func(c struct {
		prefix   string
		consumer bool
	}) bool {
		return bytes.Contains(data, []byte(`"subject":"`+c.prefix))
	}) {
		return write{}, false
	}
	var a audit
	if json.Unmarshal(data, &a) != nil {
		return write{}, false
	}
	var w write
	var rest string
	for _, c := range writeCalls {
		if r, ok := strings.CutPrefix(a.Subject, c.prefix); ok {
			rest, w.consumer = r, c.consumer
		}
	}
	if rest == "" {
		return write{}, false
	}
	stream, consumer, _ := strings.Cut(rest, ".")
	w.addr.Stream = stream
	if w.consumer {
		w.addr.Consumer, _, _ = strings.Cut(consumer, ".") // CREATE.<stream>.<consumer>.<filter>
	}
	w.foreign = true
	if a.Client != nil {
		if id, err := nc.GetClientID(); err == nil && id == a.Client.ID && a.Client.Server == nc.ConnectedServerName() {
			w.foreign = false
		}
	}
	return w, true
}

// foreignWrite marks the users on c whose server object another client
// wrote: their next pass writes the spec even if the server's
// configuration reads as the one the operator wrote last. That reading can
// be wrong: the server builds its answer to a write after the write, and
// another client's write in between is in that answer.
func (p *Pool) foreignWrite(c *Conn, w write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for user := range p.byStream[streamOn{c, w.addr.Stream}] {
		u := p.users[user]
		concerned := u.addr == w.addr || (w.consumer && w.addr.Consumer == "" && u.addr.Consumer != "")
		if concerned {
			u.foreignWrite = true
			p.users[user] = u
		}
	}
}

// TakeForeignWrite reports whether another client wrote user's server
// object since the last call, and forgets it. A pass calls it before it
// reads the server object.
func (p *Pool) TakeForeignWrite(user User) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.users[user]
	if !ok || !u.foreignWrite {
		return false
	}
	u.foreignWrite = false
	p.users[user] = u
	return true
}
