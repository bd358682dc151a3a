package e2ezones_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestReplicasSpreadOverZonesAndSurviveTheLossOfOne: five servers over
// three zones (2/2/1, the pods spread by zone first). Each server carries
// its node's zone as its JetStream tag (copied by Kubernetes onto the pod
// at binding, read through the downward API), the servers run with
// unique_tag on the zone, the status lists the servers per zone and says
// a zone can be lost. Every one of eight R3 streams has its three
// replicas in three zones; with both servers of the fullest zone frozen,
// every stream still takes an acknowledged write.
//
// Careless variant, run and seen to fail: no unique_tag (placement left
// to the servers). The varz check fails first; without it, stream Z0 had
// its replicas in zones [a b b] (by chance all eight spread with
// probability 0.4^8).
func TestReplicasSpreadOverZonesAndSurviveTheLossOfOne(t *testing.T) {
	f := e2ekit.FormCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](5) })
	zoneOf := serverZones(t, f)
	t.Logf("servers by zone: %v", byZone(zoneOf))

	for server, zone := range zoneOf {
		var varz struct {
			Tags      []string `json:"tags"`
			JetStream struct {
				Config struct {
					UniqueTag string `json:"unique_tag"`
				} `json:"config"`
			} `json:"jetstream"`
		}
		if err := e2ekit.Monitor(f.IP(server), "/varz", &varz); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(varz.Tags, "zone:"+zone) || varz.JetStream.Config.UniqueTag != "zone:" {
			t.Fatalf("%s (zone %s) has tags %v and unique_tag %q, want zone:%s and zone:", server, zone, varz.Tags, varz.JetStream.Config.UniqueTag, zone)
		}
	}
	statusSaysSo(t, f, zoneOf)

	nc := e2ekit.AppConn(t, f, "zones", f.Pods...)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var streams []string
	for i := range 8 {
		name := fmt.Sprintf("Z%d", i)
		streams = append(streams, name)
		if _, err := js.CreateStream(e2ekit.Ctx(t), jetstream.StreamConfig{Name: name, Subjects: []string{"z" + fmt.Sprint(i)}, Replicas: 3}); err != nil {
			t.Fatalf("creating R3 stream %s: %v", name, err)
		}
	}
	for _, name := range streams {
		peers := streamPeers(t, js, name)
		var inZones []string
		for _, p := range peers {
			inZones = append(inZones, zoneOf[p])
		}
		slices.Sort(inZones)
		if len(slices.Compact(slices.Clone(inZones))) != 3 {
			t.Fatalf("stream %s has replicas %v in zones %v, want three zones", name, peers, inZones)
		}
	}

	// The zone with two servers goes: frozen, as a zone cut off from the
	// rest is to them (the kernel accepts, nothing answers).
	lost := fullestZone(zoneOf)
	var frozen, staying []string
	for server, zone := range zoneOf {
		if zone == lost {
			frozen = append(frozen, server)
		} else {
			staying = append(staying, server)
		}
	}
	sort.Strings(staying)
	for _, server := range frozen {
		if err := e2ekit.Cluster.Kill(f.NS, server, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e2ekit.Cluster.Kill(f.NS, server, syscall.SIGCONT) })
	}
	lostAt := time.Now()
	survivor := e2ekit.AppConn(t, f, "zones-survivor", staying...)
	sjs, err := jetstream.New(survivor)
	if err != nil {
		t.Fatal(err)
	}
	for i := range streams {
		// A stream whose leader was in the lost zone elects another first.
		e2ekit.Eventually(t, 60*time.Second, func() error {
			ctx, cancel := context.WithTimeout(e2ekit.Ctx(t), 3*time.Second)
			defer cancel()
			_, err := sjs.Publish(ctx, "z"+fmt.Sprint(i), []byte("after the zone went"))
			return err
		})
	}
	t.Logf("zone %s lost (%v): every stream took an acknowledged write within %s", lost, frozen, time.Since(lostAt).Round(time.Millisecond))
}

// serverZones reads each server pod's zone label, which the API server
// copied from its node at binding; every pod must have one.
func serverZones(t *testing.T, f *e2ekit.Formed) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range f.Pods {
		var pod corev1.Pod
		if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKey{Namespace: f.NS, Name: name}, &pod); err != nil {
			t.Fatal(err)
		}
		zone := pod.Labels[corev1.LabelTopologyZone]
		if !slices.Contains(zones, zone) || pod.Spec.NodeName != "loopback-"+zone {
			t.Fatalf("pod %s on node %s has zone label %q", name, pod.Spec.NodeName, zone)
		}
		out[name] = zone
	}
	counts := byZone(out)
	for _, z := range zones {
		if n := len(counts[z]); n < 1 || n > 2 {
			t.Fatalf("servers by zone %v: want them spread 2/2/1", counts)
		}
	}
	return out
}

func byZone(zoneOf map[string]string) map[string][]string {
	out := map[string][]string{}
	for server, zone := range zoneOf {
		out[zone] = append(out[zone], server)
	}
	for _, servers := range out {
		sort.Strings(servers)
	}
	return out
}

func fullestZone(zoneOf map[string]string) string {
	best := ""
	counts := byZone(zoneOf)
	for _, z := range zones {
		if best == "" || len(counts[z]) > len(counts[best]) {
			best = z
		}
	}
	return best
}

// statusSaysSo: status.zones lists the servers per zone, and
// ZoneRedundant is True.
func statusSaysSo(t *testing.T, f *e2ekit.Formed, zoneOf map[string]string) {
	t.Helper()
	want := byZone(zoneOf)
	e2ekit.Eventually(t, 30*time.Second, func() error {
		var c v1alpha1.NatsCluster
		if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(f.Cluster), &c); err != nil {
			return err
		}
		got := map[string][]string{}
		for _, z := range c.Status.Zones {
			got[z.Zone] = z.Servers
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("status.zones %v, want %v", got, want)
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionZoneRedundant)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("ZoneRedundant %+v, want True", cond)
		}
		return nil
	})
}

// streamPeers are the servers holding the stream's replicas.
func streamPeers(t *testing.T, js jetstream.JetStream, name string) []string {
	t.Helper()
	var peers []string
	e2ekit.Eventually(t, 30*time.Second, func() error {
		s, err := js.Stream(e2ekit.Ctx(t), name)
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("stream %s: cluster %+v", name, info.Cluster)
		}
		peers = []string{info.Cluster.Leader}
		for _, r := range info.Cluster.Replicas {
			peers = append(peers, r.Name)
		}
		return nil
	})
	return peers
}
