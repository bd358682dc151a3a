package exporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// files serves testdata/ as if it were the monitor port of server.
type files struct {
	server string
	fail   map[string]bool
}

func (f files) Fetch(_ context.Context, path string, limit int64, _ bool, v any) error {
	name := strings.TrimPrefix(strings.SplitN(path, "?", 2)[0], "/")
	if f.fail[name] {
		return errors.New("connection refused")
	}
	file, err := os.Open(filepath.Join("testdata", f.server+"-"+name+".json"))
	if err != nil {
		return err
	}
	defer file.Close()
	return Decode(file, limit, v)
}

func gather(t *testing.T, c *Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// TestCollectorServesDescribedFamilies: the pedantic registry refuses a
// series whose family was not described or whose labels do not match its
// description: every sample the translation makes is one of Families.
func TestCollectorServesDescribedFamilies(t *testing.T) {
	for _, s := range capturedServers {
		mfs := gather(t, NewCollector(identity(s), files{server: s}, 1<<20))
		for _, want := range []string{"nats_varz_connections", "nats_varz_mem", FamilyHealthz, FamilyServerUp, "nats_server_max_storage", FamilySeriesDropped} {
			if mfs[want] == nil {
				t.Errorf("%s: no %s", s, want)
			}
		}
		if got := mfs[FamilyHealthz].Metric[0].GetGauge().GetValue(); got != 0 {
			t.Errorf("%s: healthz %v, want 0 (ok)", s, got)
		}
	}
}

// TestCollectorWithoutServer: a server that does not answer shows as down,
// with no value that would look like a reading. Careless variant watched
// failing: serving the last scrape's numbers hides a dead server behind
// flat lines.
func TestCollectorWithoutServer(t *testing.T) {
	mfs := gather(t, NewCollector(identity("c-0"), files{server: "c-0", fail: map[string]bool{"varz": true}}, 1<<20))
	if got := mfs[FamilyServerUp].Metric[0].GetGauge().GetValue(); got != 0 {
		t.Fatalf("server_up %v, want 0", got)
	}
	if got := mfs[FamilyHealthz].Metric[0].GetGauge().GetValue(); got != 1 {
		t.Fatalf("healthz %v, want 1", got)
	}
	if mfs["nats_varz_connections"] != nil || mfs[FamilyStreamMessages] != nil {
		t.Fatal("series served for a server that did not answer")
	}
}

// TestCollectorCountsDropped: past the bound the dropped series are
// counted, scrape after scrape.
func TestCollectorCountsDropped(t *testing.T) {
	c := NewCollector(identity("c-1"), files{server: "c-1"}, 1)
	for range 2 {
		gather(t, c)
	}
	// c-1 leads ORDERS and its consumer: 6 stream, 4 stream replica, 8
	// consumer and 4 consumer replica series, left out at each of three
	// scrapes (reading the counter is the third).
	if got := testutil.ToFloat64(onlyFamily(c, FamilySeriesDropped)); got != 3*22 {
		t.Fatalf("dropped %v, want %v", got, 3*22)
	}
}

// onlyFamily is a collector of c's series of one family.
func onlyFamily(c *Collector, name string) prometheus.Collector {
	return familyFilter{c: c, name: name}
}

type familyFilter struct {
	c    *Collector
	name string
}

func (f familyFilter) Describe(ch chan<- *prometheus.Desc) { ch <- f.c.descs[f.name] }
func (f familyFilter) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { f.c.Collect(all); close(all) }()
	for m := range all {
		if m.Desc() == f.c.descs[f.name] {
			ch <- m
		}
	}
}
