package envtest_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
)

// TestConnectionServersStayOutOfOtherNamespaces: connection.servers may
// lead to a pod's address or a Service's ClusterIP of the resource's own
// namespace, never another's: the operator, which every NatsCluster's
// NetworkPolicy admits, would carry a tenant past the other tenant's
// policy. The addresses are a pod's (its status written here, as a
// kubelet would) and a Service's of namespace bank, each mapped by the
// test's dialer to one nats-server: bank's Streams sync over them, shop's
// never dial (one client per address on the server, held over a window).
// Careless variant caught (run): the manager without the holders' lookup
// (the policy of main), where shop's Streams sync too; the lookup's
// field selectors and the operator's RBAC for them are what this tier
// adds to the unit tests.
func TestConnectionServersStayOutOfOtherNamespaces(t *testing.T) {
	t.Parallel()
	shop, bank := namespace(t), namespace(t)
	s := natsServer(t, 0)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: bank, Name: "nats-0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nats", Image: "nats"}}}}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.77.5", PodIPs: []corev1.PodIP{{IP: "10.244.77.5"}}}
	if err := k8s.Status().Update(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: bank, Name: "nats"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 4222}}}}
	create(t, svc)
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Fatalf("the Service got no ClusterIP: %q", svc.Spec.ClusterIP)
	}

	var bankStreams, shopStreams []*v1alpha1.Stream
	for i, ip := range []string{pod.Status.PodIP, svc.Spec.ClusterIP} {
		hostport := net.JoinHostPort(ip, "4222")
		mapHost(t, hostport, s.Addr().String())
		target := at("nats://" + hostport)
		b := newStream(bank, "bank"+strconv.Itoa(i), target)
		sh := newStream(shop, "shop"+strconv.Itoa(i), target)
		create(t, b)
		create(t, sh)
		bankStreams, shopStreams = append(bankStreams, b), append(shopStreams, sh)
	}
	for _, b := range bankStreams {
		jsReady(t, b, metav1.ConditionTrue, "Synced")
	}
	poll.Holds(t, 5*time.Second, func() error {
		for _, sh := range shopStreams {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sh), sh); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(sh.Status.Conditions, v1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
				return fmt.Errorf("shop's Stream %s synced through bank's address", sh.Name)
			}
		}
		if n := s.NumClients(); n != len(bankStreams) {
			return fmt.Errorf("the server has %d clients, want bank's %d", n, len(bankStreams))
		}
		return nil
	})
	for _, sh := range shopStreams {
		jsReady(t, sh, metav1.ConditionFalse, "ConnectionFailed")
	}
}
