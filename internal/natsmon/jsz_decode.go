package natsmon

import (
	"io"
	"strconv"
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
			var cfg groupConfig
			cfg, err = d.configOf()
			st.Replicas, st.RequiredLevel, st.DiscardNewSchedules = cfg.replicas, cfg.requiredLevel, cfg.discardNew && cfg.schedules
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
			var cfg groupConfig
			cfg, err = d.configOf()
			c.Replicas, c.RequiredLevel = cfg.replicas, cfg.requiredLevel
		case "cluster":
			c.Cluster, err = d.group(b)
		default:
			err = d.Skip()
		}
		return err
	})
	return c, err
}

// groupConfig is what the operator reads of a stream's or consumer's
// config.
type groupConfig struct {
	replicas int
	// requiredLevel is metadata["_nats.req.level"]: the JetStream API
	// level the configuration needs (0: none recorded).
	requiredLevel int
	// discardNew, schedules: `discard: new` and allow_msg_schedules.
	discardNew, schedules bool
}

// requiredLevelKey is the metadata key under which nats-server 2.11+
// records the API level a stream or consumer needs
// (server.JSRequiredLevelMetadataKey).
const requiredLevelKey = "_nats.req.level"

// maxAPILevel bounds a recorded level: nats-server 2.15 is at 5.
const maxAPILevel = 1000

// configOf reads a stream's or consumer's config.
func (d *jsonReader) configOf() (groupConfig, error) {
	var cfg groupConfig
	err := d.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "num_replicas":
			var n int64
			n, err = d.Int()
			if err == nil && (n < 0 || n > maxGroupReplicas) {
				err = d.Errorf("states %d replicas", n)
			}
			cfg.replicas = int(n)
		case "discard":
			var v string
			v, err = d.String("discard policy")
			cfg.discardNew = v == "new"
		case "allow_msg_schedules":
			cfg.schedules, err = d.Bool()
		case "metadata":
			cfg.requiredLevel, err = d.requiredLevel()
		default:
			err = d.Skip()
		}
		return err
	})
	return cfg, err
}

// requiredLevel reads requiredLevelKey out of a config's metadata, keeping
// nothing else.
func (d *jsonReader) requiredLevel() (int, error) {
	if isNull, err := d.Null(); isNull || err != nil {
		return 0, err
	}
	level := 0
	err := d.Object(func(key []byte) error {
		if string(key) != requiredLevelKey {
			return d.Skip()
		}
		v, err := d.String("API level")
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxAPILevel {
			return d.Errorf("records API level %q", Shown(v))
		}
		level = n
		return nil
	})
	return level, err
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
