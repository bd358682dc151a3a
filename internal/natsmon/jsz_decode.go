package natsmon

import (
	"io"
	"time"
)

// Limits on what one /jsz view may hold, whether read from the monitor port
// or from a system account reply. A view is kept (the rollout holds one per
// server), so what bounds its memory is how many elements it keeps, not
// its bytes: `{}` is two bytes of body and a whole element of result.
//
//   - maxJSZAccounts: accounts with JetStream on one server. The operator
//     writes one per user account of the spec; 1024 is far past any spec
//     the CRD admits.
//   - maxJSZStreams, over all accounts: at the 16 MiB body cap (maxJSZBody)
//     a real /jsz carries some 5000 streams with their consumers; 4096 is
//     what the operator is sized to settle.
//   - maxJSZConsumers, over all streams: four per stream on average.
//   - maxGroupReplicas: a stream or consumer has at most 5 replicas; the
//     meta group lists every other server, and a NatsCluster has at most
//     99 (the CRD's bound).
//   - maxJSZPeers, over all groups: every stream and consumer at 5
//     replicas lists 4 followers.
//
// At these limits a view keeps at most about 5 MB of structure (a Peer is
// 40 bytes, a Consumer 32, a Stream 56, each Raft group 48 more; twice
// that while slices grow) plus its names, which are bytes of the body and
// bounded by it.
const (
	maxJSZAccounts   = 1024
	maxJSZStreams    = 4096
	maxJSZConsumers  = 4 * maxJSZStreams
	maxGroupReplicas = 128
	maxJSZPeers      = 4 * (maxJSZStreams + maxJSZConsumers)
)

// jszBudget counts what one view kept, against the limits above.
type jszBudget struct {
	streams, consumers, peers int
}

// take counts one more of what, refusing past limit.
func (d *jsonReader) take(count *int, limit int, what string) error {
	*count++
	if *count > limit {
		return d.Errorf("lists more than %d %s", limit, what)
	}
	return nil
}

// DecodeJSZ reads one /jsz document (JSZQuery's answer) from r, refusing
// one past the limits above. body names it in errors.
func DecodeJSZ(r io.Reader, body string) (*JSInfo, error) {
	d := newJSONReader(r, body)
	info, err := d.jsInfo(&jszBudget{})
	if err != nil {
		return nil, err
	}
	return info, d.End()
}

func (d *jsonReader) jsInfo(b *jszBudget) (*JSInfo, error) {
	info := &JSInfo{}
	err := d.Object(func(key []byte) error {
		switch string(key) {
		case "meta_cluster":
			if isNull, err := d.Null(); isNull || err != nil {
				return err
			}
			info.Meta = &MetaGroup{}
			return d.metaGroup(info.Meta, b)
		case "account_details":
			info.Accounts = info.Accounts[:0]
			return d.Array(maxJSZAccounts, "accounts", func() error {
				acc, err := d.account(b)
				info.Accounts = append(info.Accounts, acc)
				return err
			})
		}
		return d.Skip()
	})
	return info, err
}

func (d *jsonReader) metaGroup(m *MetaGroup, b *jszBudget) error {
	return d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "leader":
			m.Leader, err = d.String("server name")
		case "replicas":
			m.Replicas, err = d.peers(b)
		default:
			err = d.Skip()
		}
		return err
	})
}

func (d *jsonReader) account(b *jszBudget) (Account, error) {
	var acc Account
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			acc.Name, err = d.String("account name")
		case "stream_detail":
			acc.Streams = acc.Streams[:0]
			err = d.Array(maxJSZStreams, "streams", func() error {
				if err := d.take(&b.streams, maxJSZStreams, "streams"); err != nil {
					return err
				}
				st, err := d.stream(b)
				acc.Streams = append(acc.Streams, st)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	return acc, err
}

func (d *jsonReader) stream(b *jszBudget) (Stream, error) {
	var st Stream
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			st.Name, err = d.String("stream name")
		case "config":
			st.Replicas, err = d.replicasOf()
		case "cluster":
			st.Cluster, err = d.group(b)
		case "state":
			st.Messages, err = d.messagesOf()
		case "consumer_detail":
			st.Consumers = st.Consumers[:0]
			err = d.Array(maxJSZConsumers, "consumers", func() error {
				if err := d.take(&b.consumers, maxJSZConsumers, "consumers"); err != nil {
					return err
				}
				c, err := d.consumer(b)
				st.Consumers = append(st.Consumers, c)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	return st, err
}

func (d *jsonReader) consumer(b *jszBudget) (Consumer, error) {
	var c Consumer
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			c.Name, err = d.String("consumer name")
		case "config":
			c.Replicas, err = d.replicasOf()
		case "cluster":
			c.Cluster, err = d.group(b)
		default:
			err = d.Skip()
		}
		return err
	})
	return c, err
}

// replicasOf reads num_replicas out of a stream's or consumer's config.
func (d *jsonReader) replicasOf() (int, error) {
	replicas := 0
	err := d.Object(func(key []byte) error {
		if string(key) != "num_replicas" {
			return d.Skip()
		}
		n, err := d.Int()
		if err == nil && (n < 0 || n > maxGroupReplicas) {
			err = d.Errorf("states %d replicas", n)
		}
		replicas = int(n)
		return err
	})
	return replicas, err
}

// group reads a Raft group; null is nil.
func (d *jsonReader) group(b *jszBudget) (*Group, error) {
	if isNull, err := d.Null(); isNull || err != nil {
		return nil, err
	}
	g := &Group{}
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "leader":
			g.Leader, err = d.String("server name")
		case "replicas":
			g.Replicas, err = d.peers(b)
		case "desired":
			var isNull bool
			if isNull, err = d.Null(); err == nil && !isNull {
				g.Moving = true
				err = d.Skip()
			}
		default:
			err = d.Skip()
		}
		return err
	})
	return g, err
}

func (d *jsonReader) peers(b *jszBudget) ([]Peer, error) {
	var out []Peer
	err := d.Array(maxGroupReplicas, "replicas in one group", func() error {
		if err := d.take(&b.peers, maxJSZPeers, "replicas over all groups"); err != nil {
			return err
		}
		p, err := d.peer()
		out = append(out, p)
		return err
	})
	return out, err
}

func (d *jsonReader) peer() (Peer, error) {
	var p Peer
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			p.Name, err = d.String("server name")
		case "current":
			p.Current, err = d.Bool()
		case "offline":
			p.Offline, err = d.Bool()
		case "active":
			var ns int64
			ns, err = d.Int()
			p.Active = time.Duration(ns)
		case "lag":
			p.Lag, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return p, err
}

// messagesOf reads a stream's "state" for its message count.
func (d *jsonReader) messagesOf() (uint64, error) {
	var n uint64
	err := d.Object(func(key []byte) error {
		if string(key) != "messages" {
			return d.Skip()
		}
		var err error
		n, err = d.Uint()
		return err
	})
	return n, err
}
