package jetstream

import (
	"bytes"
	"encoding/json"
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

// auditSubject carries the server's audit of every JetStream API call. The
// server sends no advisory when a consumer's configuration is updated, so
// consumer create-or-update calls are read from here.
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
			if addr, ok := consumerWrite(m.Data); ok {
				p.advisory(c, addr)
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

// audit is the part of a JetStream API audit this package reads.
type audit struct {
	Subject string `json:"subject"`
}

// consumerWrite reads an API audit and returns the consumer a create or
// update call addressed, whoever made it and whatever the server answered:
// the woken pass compares, so a call that changed nothing costs one read. A
// create subject without a consumer name addresses every consumer of its
// stream.
func consumerWrite(data []byte) (Address, bool) {
	// Most audits are of other calls (infos, the pool's own reads): skip
	// them without decoding their often long responses. The server writes
	// the subject with encoding/json, which leaves '$' and '.' as they are.
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
	if rest == "" {
		return Address{}, false
	}
	stream, consumer, _ := strings.Cut(rest, ".")
	consumer, _, _ = strings.Cut(consumer, ".") // CREATE.<stream>.<consumer>.<filter>
	return Address{Stream: stream, Consumer: consumer}, true
}
