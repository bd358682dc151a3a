package envtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// loopbackNet is a random 127.<a>.<b>.0/24, away from the loopback
// cluster's 127.0.x.0/24 and from other runs of this suite, which may dial
// their own pods' addresses at any time; and never one this process gave
// before: tests running at once listen on their pods' addresses, and the
// pods of a test that ended stay in the API server.
func loopbackNet() string {
	loopbackNets.Lock()
	defer loopbackNets.Unlock()
	for {
		n := fmt.Sprintf("127.%d.%d.", 100+rand.IntN(150), 1+rand.IntN(254))
		if !loopbackNets.given[n] {
			loopbackNets.given[n] = true
			return n
		}
	}
}

var loopbackNets = struct {
	sync.Mutex
	given map[string]bool
}{given: map[string]bool{}}

// listener counts the connections made to a loopback address on the
// client and monitor ports of a server, the ones the operator dials.
type listener struct{ accepted atomic.Int64 }

func listenAt(t *testing.T, ip string) *listener {
	l := &listener{}
	for _, port := range []int{render.ClientPort, render.MonitorPort} {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				l.accepted.Add(1)
				_ = conn.Close()
			}
		}()
	}
	return l
}

// serverPod makes a running, ready pod with the cluster's labels at ip, on
// template revision rev; owner, when set, is the StatefulSet controlling it.
func serverPod(t *testing.T, c *v1alpha1.NatsCluster, name, rev, ip string, owner *appsv1.StatefulSet) *corev1.Pod {
	t.Helper()
	// The labels of the StatefulSet's pod template, which the operator's
	// cache of pods selects on.
	labels := render.SelectorLabels(c)
	labels[render.LabelManagedBy] = render.ManagedBy
	labels[appsv1.ControllerRevisionHashLabelKey] = rev
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nats", Image: "nats"}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	// The pod is born without the managed-by label, outside the
	// operator's cache, and joins it only once it is running and ready:
	// a pod the operator saw between its creation and its status would
	// be an outdated server that is not ready, which a rollout replaces
	// at once (a test once lost its pod that way).
	delete(pod.Labels, render.LabelManagedBy)
	create(t, pod)
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
	}
	if err := k8s.Status().Update(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	pod.Labels[render.LabelManagedBy] = render.ManagedBy
	if err := k8s.Update(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// rolling writes the StatefulSet status of a rollout under way: every
// server ready, the template at revision r2.
func rolling(t *testing.T, c *v1alpha1.NatsCluster) *appsv1.StatefulSet {
	t.Helper()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
	get(t, sts)
	n := ptr.Deref(sts.Spec.Replicas, 1)
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n, CurrentReplicas: n, AvailableReplicas: n,
		CurrentRevision: "r1", UpdateRevision: "r2",
	}
	if err := k8s.Status().Update(ctx(t), sts); err != nil {
		t.Fatal(err)
	}
	return sts
}

// currentMonitor answers on ip's monitor port as a server current in all
// its Raft groups would: /healthz?details=true says so, and /raftz lists
// no group with entries left to apply.
func currentMonitor(t *testing.T, ip string) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(render.MonitorPort)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/raftz" {
			_, _ = w.Write([]byte(`{"$SYS":{"_meta_":{"committed":12,"applied":12}}}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok","status_code":200}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// untouched holds while the impostor pod exists and nothing dialled it.
func untouched(t *testing.T, impostor *corev1.Pod, l *listener) func() error {
	return func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(impostor), &corev1.Pod{}); err != nil {
			return fmt.Errorf("the impostor pod: %v", err)
		}
		if n := l.accepted.Load(); n != 0 {
			return fmt.Errorf("the operator connected %d times to the impostor pod", n)
		}
		return nil
	}
}

// A pod that only wears a cluster's labels is not one of its servers: a
// rollout neither replaces it nor sends it the system password, and the
// version probe does not ask it.
func TestForeignPodsWithTheClustersLabelsAreLeftAlone(t *testing.T) {
	t.Parallel()
	t.Run("rollout", func(t *testing.T) {
		t.Parallel()
		c := oneServerCluster(t)
		sts := rolling(t, c)
		subnet := loopbackNet()
		serverPod(t, c, "nats-0", "r2", subnet+"1", sts)
		l := listenAt(t, subnet+"9")
		impostor := serverPod(t, c, "impostor", "r1", subnet+"9", nil)
		// Nothing of the cluster is outdated: the pass that sees the
		// impostor finds the rollout done.
		poll.Holds(t, 3*time.Second, untouched(t, impostor, l))
	})
	t.Run("system connection", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t)
		c := natsCluster(ns, "nats")
		create(t, c)
		sts := rolling(t, c)
		subnet := loopbackNet()
		for i := range 3 {
			ip := fmt.Sprintf("%s%d", subnet, i+1)
			// Each server says on its monitor port that it is current, so
			// that the rollout's gate goes on to ask JetStream, with the
			// system user, over the client port (where nothing answers).
			currentMonitor(t, ip)
			serverPod(t, c, fmt.Sprintf("nats-%d", i), "r1", ip, sts)
		}
		l := listenAt(t, subnet+"9")
		impostor := serverPod(t, c, "impostor", "r1", subnet+"9", nil)
		// The rollout asks the servers (which do not answer here) whether
		// JetStream has settled: it ran, with the system user.
		eventually(t, wait, func() error {
			if _, _, msg := readyMessage(t, c); !strings.Contains(msg, "JetStream to settle") {
				return fmt.Errorf("Ready %q, want the rollout waiting for JetStream", msg)
			}
			return nil
		})
		poll.Holds(t, 3*time.Second, untouched(t, impostor, l))
	})
}

// expandable is a storage class whose volumes may grow: the API server
// refuses to resize claims of any other.
func expandable(t *testing.T, name string) string {
	t.Helper()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/none", AllowVolumeExpansion: ptr.To(true)}
	create(t, class)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), class) })
	return name
}

// boundClaim makes a bound claim of size and class with the cluster's labels.
func boundClaim(t *testing.T, c *v1alpha1.NatsCluster, name, size, class string, owners []metav1.OwnerReference) *corev1.PersistentVolumeClaim {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: render.SelectorLabels(c), OwnerReferences: owners},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	create(t, claim)
	claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}
	if err := k8s.Status().Update(ctx(t), claim); err != nil {
		t.Fatal(err)
	}
	return claim
}

// Growing the store patches the cluster's own claims, and no claim of
// another installation that wears the same labels.
func TestGrowingTheStorePatchesOnlyTheClustersClaims(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
	create(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)
	class := expandable(t, ns)
	ours := boundClaim(t, c, "data-nats-0", "10Gi", class, nil)
	otherSts := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "nats", UID: "not-this-one", Controller: ptr.To(true)}}
	foreign := []*corev1.PersistentVolumeClaim{
		boundClaim(t, c, "data-nats-1", "10Gi", class, otherSts),
		boundClaim(t, c, "data-other-0", "10Gi", class, nil),
	}

	size := resource.MustParse("20Gi")
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.FileStore.Size = &size })
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(ours), ours); err != nil {
			return err
		}
		if got := ours.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(size) != 0 {
			return fmt.Errorf("the cluster's claim asks for %s", got.String())
		}
		return nil
	})
	for _, claim := range foreign {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(claim), claim); err != nil {
			t.Fatal(err)
		}
		if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "10Gi" {
			t.Errorf("claim %s of another installation was patched to %s", claim.Name, got.String())
		}
	}
}
