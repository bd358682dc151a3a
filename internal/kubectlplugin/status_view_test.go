package kubectlplugin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestWriteStatus: the status view shows what a person checks first, each
// on its own line: the phase and the servers ready, a spec the operator
// has not seen, a pause, when the certificates expire, every condition
// (a message of several lines on one row), each server with its version
// and restarts, and each JetStream resource with its leader and how its
// replicas are. Careless views it catches: one that prints the spec's
// replicas as ready, one that drops the conditions that are True, and one
// that says nothing of a follower that is behind.
func TestWriteStatus(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	nc := v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nats", Generation: 4,
		Annotations: map[string]string{v1alpha1.AnnotationPauseReconciliation: "true"}}}
	nc.Spec.Replicas = ptr32(3)
	expiry := metav1.NewTime(now.Add(89 * 24 * time.Hour))
	nc.Status = v1alpha1.NatsClusterStatus{ObservedGeneration: 3, Phase: v1alpha1.PhaseReady, ReadyReplicas: 2, ServerVersion: "2.15.3",
		ServerVersionSource: v1alpha1.VersionObserved, CertificatesExpiry: &expiry,
		Endpoint:   v1alpha1.Endpoint{Internal: "tls://nats.shop.svc:4222"},
		Leaders:    []v1alpha1.ServerLeaders{{Server: "nats-0", Groups: 3}, {Server: "nats-1", Groups: 2}},
		MetaLeader: "nats-1",
		Zones:      []v1alpha1.ZoneServers{{Zone: "eu-1a", Servers: []string{"nats-0"}}, {Zone: "eu-1b", Servers: []string{"nats-1", "nats-2"}}},
		Carried:    &v1alpha1.CarriedRequests{Evacuate: "nats-2@2026-12-06T11:00:00Z"},
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonOOMKilled, Message: "nats-1: killed\nfor its limit", LastTransitionTime: ago(90 * time.Second)},
			{Type: "CertificatesReady", Status: metav1.ConditionTrue, Reason: "CertificatesReady", Message: "2 certificates ready", LastTransitionTime: ago(3 * time.Hour)},
		}}
	pod := func(name string, ready bool, restarts int32) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(5 * time.Minute),
				Labels: map[string]string{render.LabelVersion: "2.15.3"}, Annotations: map[string]string{render.AnnotationConfigHash: "0123456789abcdef"}},
			Spec:   corev1.PodSpec{NodeName: "node-a"},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: restarts}}},
		}
	}
	c := &Cluster{NatsCluster: nc, Pods: []corev1.Pod{pod("nats-0", true, 0), pod("nats-1", false, 3)},
		JetStream: []Resource{{Kind: "Stream", Namespace: "shop", Name: "orders", Status: v1alpha1.JetStreamStatus{
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Synced"}},
			Cluster:    &v1alpha1.RaftGroupStatus{Leader: "nats-0", Replicas: []v1alpha1.ReplicaStatus{{Name: "nats-1", Offline: true}, {Name: "nats-2"}}}}}}}
	var out bytes.Buffer
	if err := WriteStatus(&out, c, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"NatsCluster shop/nats: Ready, 2 of 3 servers ready, nats-server 2.15.3 (Observed)\n",
		"the operator has not seen the latest spec yet (generation 4, observed 3)",
		"paused: the operator makes no change (kubectl kubenats resume natscluster nats)",
		"clients: tls://nats.shop.svc:4222",
		"leaders: nats-0 3, nats-1 2",
		"JetStream meta leader: nats-1",
		"zones: eu-1a: nats-0; eu-1b: nats-1 nats-2",
		"last evacuation carried out: nats-2@2026-12-06T11:00:00Z",
		"certificates: the first expires 2027-03-05T12:00:00Z (in 89d)",
		"Ready              False   OOMKilled          90s    nats-1: killed for its limit",
		"CertificatesReady  True    CertificatesReady  3h     2 certificates ready",
		"nats-0  yes    2.15.3   0         node-a  5m   01234567",
		"nats-1  no     2.15.3   3         node-a  5m   01234567",
		"Stream  shop/orders  True   Synced  nats-0  nats-1 offline, nats-2 behind",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the view lacks %q:\n%s", want, got)
		}
	}
}

func ptr32(v int32) *int32 { return &v }

// TestObjectOf: every name kubectl users type for a kind, and a clear
// refusal of another.
func TestObjectOf(t *testing.T) {
	for in, want := range map[string]string{
		"natscluster": "*v1alpha1.NatsCluster", "natsclusters": "*v1alpha1.NatsCluster", "nc": "*v1alpha1.NatsCluster",
		"Streams": "*v1alpha1.Stream", "streams.kubenats.io": "*v1alpha1.Stream", "consumer": "*v1alpha1.Consumer",
		"kv": "*v1alpha1.KeyValue", "keyvalues": "*v1alpha1.KeyValue", "objectstores": "*v1alpha1.ObjectStore",
	} {
		obj, err := objectOf(in)
		if err != nil || typeName(obj) != want {
			t.Errorf("objectOf(%q) = %s, %v; want %s", in, typeName(obj), err, want)
		}
	}
	if _, err := objectOf("secret"); err == nil || !strings.Contains(err.Error(), "not \"secret\"") {
		t.Errorf("objectOf(secret) = %v, want a refusal naming it", err)
	}
}

func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmtType(v)
}

func fmtType(v any) string { return fmt.Sprintf("%T", v) }
