package exporter

import (
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubenats/kubenats/test/testnats"
)

// jwtServer is a real nats-server trusting one operator, with its accounts
// in a memory resolver: JWT mode as spec.auth.mode jwt runs it.
type jwtServer struct {
	t        *testing.T
	operator nkeys.KeyPair
	resolver *server.MemAccResolver
	srv      *server.Server
}

func startJWTServer(t *testing.T) *jwtServer {
	t.Helper()
	j := &jwtServer{t: t, operator: must(nkeys.CreateOperator()), resolver: &server.MemAccResolver{}}
	system := j.account("SYS", func(*jwt.AccountClaims) {})
	oc := jwt.NewOperatorClaims(must(j.operator.PublicKey()))
	oc.SystemAccount = system
	j.srv = testnats.Start(t, 0, func(o *server.Options) {
		o.ServerName = "n-0"
		o.HTTPHost, o.HTTPPort = "127.0.0.1", testnats.FreePort(t)
		o.TrustedOperators = []*jwt.OperatorClaims{oc}
		o.AccountResolver = j.resolver
		o.SystemAccount = system
	})
	return j
}

// account stores an account JWT the operator signed and returns its
// public key, the account's name in JWT mode.
func (j *jwtServer) account(name string, edit func(*jwt.AccountClaims)) string {
	pub := must(must(nkeys.CreateAccount()).PublicKey())
	ac := jwt.NewAccountClaims(pub)
	ac.Name = name
	edit(ac)
	token, err := ac.Encode(j.operator)
	if err != nil {
		j.t.Fatal(err)
	}
	if err := j.resolver.Store(pub, token); err != nil {
		j.t.Fatal(err)
	}
	return pub
}

// register makes the server load the account (as a client's connect
// would), turning its JetStream on.
func (j *jwtServer) register(pub string) {
	if _, err := j.srv.LookupAccount(pub); err != nil {
		j.t.Fatalf("account %s: %v", pub, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestAccountLimitsFromARealServerInJWTMode: the meta leader serves each
// JetStream account's limits from its JWT as the server shows it on
// /accountz, beside the account's usage: a limit as a number, an unlimited
// one not at all, and an account with limits per replica count (which
// leave the account-wide ones at zero) none. Careless variants watched
// failing: reading mem_storage as absent-means-unlimited (the memory
// limit of 0 is missing), serving -1 (a series with a negative limit),
// and serving the zero account-wide limits of a tiered account.
func TestAccountLimitsFromARealServerInJWTMode(t *testing.T) {
	j := startJWTServer(t)
	limited := j.account("APP", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: 1 << 20, DiskStorage: 10 << 20, Streams: -1, Consumer: -1}
	})
	diskOnly := j.account("LOGS", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{DiskStorage: jwt.NoLimit, Streams: -1, Consumer: -1}
	})
	tiered := j.account("TIERED", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamTieredLimits = jwt.JetStreamTieredLimits{"R1": {DiskStorage: 1 << 20, Streams: -1, Consumer: -1}}
	})
	for _, pub := range []string{limited, diskOnly, tiered} {
		j.register(pub)
	}

	fetch, err := NewHTTPFetcher("http://"+j.srv.MonitorAddr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mfs := gather(t, NewCollector(Identity{Server: "n-0", Namespace: "ns", NatsCluster: "nc"}, fetch, 100))
	byAccount := func(family string) map[string]float64 {
		out := map[string]float64{}
		if mfs[family] == nil {
			return out
		}
		for _, m := range mfs[family].Metric {
			out[labelValue(m, "account_id")] = m.GetGauge().GetValue()
		}
		return out
	}
	used := byAccount("nats_account_used_storage")
	for _, pub := range []string{limited, diskOnly, tiered} {
		if _, ok := used[pub]; !ok {
			t.Fatalf("account %s has no usage series: the server did not turn its JetStream on (%v)", pub, used)
		}
	}
	memory, storage := byAccount(FamilyAccountMaxMemory), byAccount(FamilyAccountMaxStorage)
	want := []struct {
		what, account string
		got           map[string]float64
		value         float64
		served        bool
	}{
		{"APP's memory limit", limited, memory, 1 << 20, true},
		{"APP's storage limit", limited, storage, 10 << 20, true},
		{"LOGS's memory limit (none: 0)", diskOnly, memory, 0, true},
		{"LOGS's unlimited storage", diskOnly, storage, 0, false},
		{"TIERED's memory limit", tiered, memory, 0, false},
		{"TIERED's storage limit", tiered, storage, 0, false},
	}
	for _, w := range want {
		v, ok := w.got[w.account]
		if ok != w.served || (ok && v != w.value) {
			t.Errorf("%s: served %v value %v, want served %v value %v", w.what, ok, v, w.served, w.value)
		}
	}
	for _, m := range mfs[FamilyScrapeErrors].Metric {
		if labelValue(m, "endpoint") == "accountz" && m.GetCounter().GetValue() != 0 {
			t.Errorf("%v /accountz reads failed", m.GetCounter().GetValue())
		}
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
