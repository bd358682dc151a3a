package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestAddressBookGivesEachPodItsOwn: a pod re-created under the same name
// gets another address; the one given back goes to the end of the line,
// not to the next pod; a pod of a name waits while its predecessor holds
// an address; the mesh's named addresses are never a pod's.
func TestAddressBookGivesEachPodItsOwn(t *testing.T) {
	b, err := newAddressBook()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	key := types.NamespacedName{Namespace: "ns", Name: "nats-0"}
	first, ok, err := b.acquire(key, "uid-1")
	if err != nil || !ok {
		t.Fatalf("first pod: %v %v", ok, err)
	}
	if again, _, _ := b.acquire(key, "uid-1"); again != first {
		t.Fatalf("the same pod asked again got %s, want its own %s", again, first)
	}
	if got := b.podAddress(key); got != first {
		t.Fatalf("podAddress %q, want %s", got, first)
	}
	if _, ok, _ := b.acquire(key, "uid-2"); ok {
		t.Fatal("a replacement got an address while its predecessor still holds one")
	}
	named, err := b.address("ns", "nats-0~app")
	if err != nil || named == first {
		t.Fatalf("named address %s (%v), want one apart from the pod's %s", named, err, first)
	}

	b.release(key, "uid-1")
	if got := b.podAddress(key); got != "" {
		t.Fatalf("podAddress %q after the pod went, want none", got)
	}
	second, ok, err := b.acquire(key, "uid-2")
	if err != nil || !ok {
		t.Fatalf("replacement: %v %v", ok, err)
	}
	if second == first || second == named {
		t.Fatalf("replacement at %s: want a new address, not the predecessor's %s or the named %s", second, first, named)
	}
	// Every other free address goes before the released one comes back.
	seen := map[string]bool{first: true, second: true, named: true}
	for i := 3; i <= 253; i++ {
		k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("pod-%d", i)}
		ip, ok, err := b.acquire(k, types.UID(k.Name))
		if err != nil || !ok {
			t.Fatalf("pod %d: %v %v", i, ok, err)
		}
		if seen[ip] {
			t.Fatalf("pod %d got %s, which is taken or was just given back", i, ip)
		}
		seen[ip] = true
	}
	last := types.NamespacedName{Namespace: "ns", Name: "last"}
	if ip, ok, err := b.acquire(last, "last"); err != nil || !ok || ip != first {
		t.Fatalf("the only free address is %s; got %q (%v, %v)", first, ip, ok, err)
	}
	if _, _, err := b.acquire(types.NamespacedName{Namespace: "ns", Name: "one-too-many"}, "x"); err == nil {
		t.Fatal("an address beyond the /24 was handed out")
	}
}

// TestDNSNamesOnlyForPodsThatHoldAnAddress: a pod's name resolves (hosts
// file and Cluster.Dial) only while a pod of that name exists and holds an
// address, and a re-created pod answers at a new address under its name,
// while nothing listens at the old one.
func TestDNSNamesOnlyForPodsThatHoldAnAddress(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns, _ := probeNamespace(t, c, "addresses")
	must(t, c.Client.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "probe"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "probe"},
			PublishNotReadyAddresses: true, Ports: []corev1.ServicePort{{Name: "monitor", Port: 8222}}},
	}))
	const name = "probe-0.probe." + "addresses" + ".svc"
	if ip, ok := resolves(t, c, ns.Name, name); ok {
		t.Fatalf("%s resolves to %s before the pod exists", name, ip)
	}
	if ip := c.PodIP(ns.Name, "probe-0"); ip != "" {
		t.Fatalf("PodIP %s before the pod exists", ip)
	}

	must(t, c.Client.Create(ctx, probeStatefulSet(ns.Name)))
	pod := readyPod(t, c, ns.Name, "probe-0", 0)
	first := pod.Status.PodIP
	if ip, ok := resolves(t, c, ns.Name, name); !ok || ip != first {
		t.Fatalf("%s resolves to %q (%v), want the pod's %s", name, ip, ok, first)
	}

	// The pod goes; until its replacement holds an address, the name is
	// not there (checked at every look while the replacement comes).
	must(t, c.Client.Delete(ctx, pod))
	var next *corev1.Pod
	eventually(t, func() error {
		ip, ok := resolves(t, c, ns.Name, name)
		p := &corev1.Pod{}
		err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "probe-0"}, p)
		switch {
		case ok && ip == first && (err != nil || p.UID != pod.UID):
			t.Fatalf("%s still resolves to the old pod's %s after it was deleted", name, first)
		case err != nil || p.UID == pod.UID || !PodReady(p):
			return fmt.Errorf("no ready replacement yet (%v)", err)
		}
		next = p
		return nil
	})
	second := next.Status.PodIP
	if second == "" || second == first {
		t.Fatalf("the replacement is at %q, want a new address, not its predecessor's %s", second, first)
	}
	if ip, ok := resolves(t, c, ns.Name, name); !ok || ip != second {
		t.Fatalf("%s resolves to %q (%v), want the replacement's %s", name, ip, ok, second)
	}
	if got := c.PodIP(ns.Name, "probe-0"); got != second {
		t.Fatalf("PodIP %s, want the replacement's %s", got, second)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort(first, "8222"), time.Second); err == nil {
		_ = conn.Close()
		t.Fatalf("something still listens at the old address %s", first)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialing the old address: %v, want connection refused", err)
	}
	var v struct {
		ServerName string `json:"server_name"`
	}
	getJSON(t, second, "/varz", &v)
	if v.ServerName != "probe-0" {
		t.Fatalf("the server at %s is %q, want probe-0", second, v.ServerName)
	}
}

// resolves reads name in namespace ns's hosts file (what the servers see)
// and through Cluster.Dial's resolver (what the test process sees); the
// two must agree.
func resolves(t *testing.T, c *Cluster, ns, name string) (string, bool) {
	t.Helper()
	var fromFile, fromDial string
	for range 5 { // the files may change between the two reads
		fromFile, fromDial = lookBoth(t, c, ns, name)
		if fromFile == fromDial {
			return fromFile, fromFile != ""
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: the hosts file says %q, Cluster.Dial %q", name, fromFile, fromDial)
	return "", false
}

func lookBoth(t *testing.T, c *Cluster, ns, name string) (fromFile, fromDial string) {
	data, err := os.ReadFile(c.kubelet.dns.hostsFile(ns))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		for _, f := range fields[min(1, len(fields)):] {
			if f == name {
				fromFile = fields[0]
			}
		}
	}
	if addr, ok, err := c.resolve(context.Background(), name, "8222"); err == nil && ok {
		fromDial, _, _ = net.SplitHostPort(addr)
	}
	return fromFile, fromDial
}
