package exporter

import (
	"io"

	"github.com/kubenats/kubenats/internal/jsonread"
)

// The monitor documents read with the bounded streaming reader the
// operator uses (package jsonread): unknown fields are skipped without
// being built, and the arrays kept are counted against the limits below,
// so that what one scrape holds is bounded by count, not only by bytes
// (`{}` is two bytes of body and a whole Stream of result).
//
//   - maxAccounts: accounts with JetStream on one server;
//   - maxStreams, over all accounts: what MaxJSZBody carries, about
//     20,000 streams with a consumer each;
//   - maxConsumers, over all streams: four per stream on average;
//   - maxGroupReplicas: the replicas of one Raft group (a NatsCluster has
//     at most 99 servers);
//   - maxSources: the sources of one stream.
//
// At these limits one /jsz keeps about 20 MB (a Stream is ~200 bytes with
// its group, a Consumer ~150), within the container's 64 MiB.
const (
	maxAccounts      = 1024
	maxStreams       = 20000
	maxConsumers     = 4 * maxStreams
	maxGroupReplicas = 128
	maxSources       = 256
)

// jszCounts counts what one /jsz kept, against the limits above.
type jszCounts struct{ streams, consumers int }

func decodeHealthz(r io.Reader) (Healthz, error) {
	d := jsonread.New(r, "/healthz")
	var h Healthz
	err := d.Object(func(key []byte) (err error) {
		if string(key) == "status" {
			h.Status, err = d.String("status")
			return err
		}
		return d.Skip()
	})
	if err != nil {
		return h, err
	}
	return h, d.End()
}

func decodeVarz(r io.Reader) (Varz, error) {
	d := jsonread.New(r, "/varz")
	var v Varz
	numbers := map[string]*float64{
		"connections": &v.Connections, "total_connections": &v.TotalConnections,
		"subscriptions": &v.Subscriptions, "slow_consumers": &v.SlowConsumers,
		"in_msgs": &v.InMsgs, "out_msgs": &v.OutMsgs, "in_bytes": &v.InBytes, "out_bytes": &v.OutBytes,
		"mem": &v.Mem, "cpu": &v.CPU, "cores": &v.Cores, "gomaxprocs": &v.GoMaxProcs,
		"routes": &v.Routes, "remotes": &v.Remotes, "leafnodes": &v.Leafnodes,
		"max_connections": &v.MaxConnections, "max_payload": &v.MaxPayload, "stale_connections": &v.StaleConnections,
	}
	err := d.Object(func(key []byte) (err error) {
		if p, ok := numbers[string(key)]; ok {
			*p, err = d.Float()
			return err
		}
		switch string(key) {
		case "server_name":
			v.ServerName, err = d.String("server name")
		case "start":
			v.Start, err = d.Time("start time")
		case "now":
			v.Now, err = d.Time("time")
		default:
			err = d.Skip()
		}
		return err
	})
	if err != nil {
		return v, err
	}
	return v, d.End()
}

func decodeJSZ(r io.Reader) (JSZ, error) {
	d := jsonread.New(r, "/jsz")
	var z JSZ
	n := &jszCounts{}
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "disabled":
			z.Disabled, err = d.Bool()
		case "config":
			err = d.Object(func(key []byte) (err error) {
				switch string(key) {
				case "max_memory":
					z.Config.MaxMemory, err = d.Int()
				case "max_storage":
					z.Config.MaxStorage, err = d.Int()
				case "domain":
					z.Config.Domain, err = d.String("domain")
				default:
					err = d.Skip()
				}
				return err
			})
		case "memory":
			z.Memory, err = d.Uint()
		case "storage":
			z.Storage, err = d.Uint()
		case "api":
			z.API, err = readAPI(d)
		case "streams":
			z.Streams, err = d.Int()
		case "consumers":
			z.Consumers, err = d.Int()
		case "messages":
			z.Messages, err = d.Uint()
		case "bytes":
			z.Bytes, err = d.Uint()
		case "meta_cluster":
			z.Meta, err = readRaft(d)
		case "account_details":
			z.Accounts = z.Accounts[:0]
			err = d.Array(maxAccounts, "accounts", func() error {
				a, err := readAccount(d, n)
				z.Accounts = append(z.Accounts, a)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	if err != nil {
		return z, err
	}
	return z, d.End()
}

func readAPI(d *jsonread.Reader) (API, error) {
	var a API
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "total":
			a.Total, err = d.Uint()
		case "errors":
			a.Errors, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return a, err
}

// readRaft reads a Raft group, or null (nil).
func readRaft(d *jsonread.Reader) (*Raft, error) {
	if isNull, err := d.Null(); isNull || err != nil {
		return nil, err
	}
	g := &Raft{}
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			g.Name, err = d.String("group name")
		case "leader":
			g.Leader, err = d.String("leader name")
		case "cluster_size":
			var size int64
			size, err = d.Int()
			g.ClusterSize = int(size)
		case "replicas":
			g.Replicas = g.Replicas[:0]
			err = d.Array(maxGroupReplicas, "replicas of a group", func() error {
				r, err := readReplica(d)
				g.Replicas = append(g.Replicas, r)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	return g, err
}

func readReplica(d *jsonread.Reader) (Replica, error) {
	var r Replica
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			r.Name, err = d.String("replica name")
		case "current":
			r.Current, err = d.Bool()
		case "offline":
			r.Offline, err = d.Bool()
		case "lag":
			r.Lag, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return r, err
}

func readAccount(d *jsonread.Reader, n *jszCounts) (Account, error) {
	var a Account
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			a.Name, err = d.String("account name")
		case "id":
			a.ID, err = d.String("account id")
		case "memory":
			a.Memory, err = d.Uint()
		case "storage":
			a.Storage, err = d.Uint()
		case "api":
			a.API, err = readAPI(d)
		case "stream_detail":
			a.Streams = a.Streams[:0]
			err = d.Array(maxStreams, "streams", func() error {
				if n.streams++; n.streams > maxStreams {
					return d.Errorf("lists more than %d streams", maxStreams)
				}
				s, err := readStream(d, n)
				a.Streams = append(a.Streams, s)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	return a, err
}

func readStream(d *jsonread.Reader, n *jszCounts) (Stream, error) {
	var s Stream
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			s.Name, err = d.String("stream name")
		case "cluster":
			s.Cluster, err = readRaft(d)
		case "state":
			err = d.Object(func(key []byte) (err error) {
				st := &s.State
				switch string(key) {
				case "messages":
					st.Messages, err = d.Uint()
				case "bytes":
					st.Bytes, err = d.Uint()
				case "first_seq":
					st.FirstSeq, err = d.Uint()
				case "last_seq":
					st.LastSeq, err = d.Uint()
				case "num_subjects":
					st.NumSubjects, err = d.Uint()
				case "consumer_count":
					st.ConsumerCount, err = d.Int()
				default:
					err = d.Skip()
				}
				return err
			})
		case "mirror":
			if isNull, err := d.Null(); isNull || err != nil {
				return err
			}
			var m Source
			m, err = readSource(d)
			s.Mirror = &m
		case "sources":
			s.Sources = s.Sources[:0]
			err = d.Array(maxSources, "sources of a stream", func() error {
				src, err := readSource(d)
				s.Sources = append(s.Sources, src)
				return err
			})
		case "consumer_detail":
			s.Consumers = s.Consumers[:0]
			err = d.Array(maxConsumers, "consumers", func() error {
				if n.consumers++; n.consumers > maxConsumers {
					return d.Errorf("lists more than %d consumers", maxConsumers)
				}
				c, err := readConsumer(d)
				s.Consumers = append(s.Consumers, c)
				return err
			})
		default:
			err = d.Skip()
		}
		return err
	})
	return s, err
}

func readSource(d *jsonread.Reader) (Source, error) {
	var s Source
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			s.Name, err = d.String("source name")
		case "lag":
			s.Lag, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return s, err
}

func readSequencePair(d *jsonread.Reader) (SequencePair, error) {
	var p SequencePair
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "consumer_seq":
			p.Consumer, err = d.Uint()
		case "stream_seq":
			p.Stream, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return p, err
}

func readConsumer(d *jsonread.Reader) (Consumer, error) {
	var c Consumer
	err := d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "name":
			c.Name, err = d.String("consumer name")
		case "cluster":
			c.Cluster, err = readRaft(d)
		case "delivered":
			c.Delivered, err = readSequencePair(d)
		case "ack_floor":
			c.AckFloor, err = readSequencePair(d)
		case "num_ack_pending":
			c.NumAckPending, err = d.Int()
		case "num_redelivered":
			c.NumRedelivered, err = d.Int()
		case "num_waiting":
			c.NumWaiting, err = d.Int()
		case "num_pending":
			c.NumPending, err = d.Uint()
		default:
			err = d.Skip()
		}
		return err
	})
	return c, err
}
