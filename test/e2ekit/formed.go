package e2ekit

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Formed is a NatsCluster that reached Ready, and where its servers are.
type Formed struct {
	NS      string
	Cluster *v1alpha1.NatsCluster
	// Pods are the servers the spec asked for when it formed.
	Pods []string
}

// IP is the loopback address of one of its pods.
func (f *Formed) IP(pod string) string { return Cluster.PodIP(f.NS, pod) }

// FormCluster creates a NatsCluster named nats (3 servers unless an edit
// says otherwise) in a new namespace, waits for it to report Ready, and
// logs how long each step took.
func FormCluster(t *testing.T, edits ...func(*v1alpha1.NatsClusterSpec)) *Formed {
	t.Helper()
	return FormClusterIn(t, Namespace(t), "nats", edits...)
}

// FormClusterIn is FormCluster in a namespace the test made, under a name
// of its choosing.
func FormClusterIn(t *testing.T, ns, name string, edits ...func(*v1alpha1.NatsClusterSpec)) *Formed {
	t.Helper()
	return StartClusterIn(t, ns, name, edits...).Ready(t)
}

// Forming is a NatsCluster created and not waited for yet: clusters that
// can only become Ready together (the members of a JetStream supercluster,
// whose meta group needs every member) are started first, then waited for.
type Forming struct {
	c  *v1alpha1.NatsCluster
	ns string
	tl *timeline
}

// StartClusterIn creates the NatsCluster FormClusterIn would, without
// waiting for it.
func StartClusterIn(t *testing.T, ns, name string, edits ...func(*v1alpha1.NatsClusterSpec)) *Forming {
	t.Helper()
	DiagnoseOnFailure(t, ns)
	tl := watchTimeline(t, ns)
	c := NatsCluster(ns, name, edits...)
	tl.begin()
	if err := Cluster.Client.Create(Ctx(t), c); err != nil {
		t.Fatal(err)
	}
	// The clock starts before the create call, which has been seen to take
	// seconds on a busy machine: the timeline shows when it returned.
	tl.mark("NatsCluster create call returned")
	return &Forming{c: c, ns: ns, tl: tl}
}

// Ready waits for the cluster to report Ready and logs how long each step
// took.
func (f *Forming) Ready(t *testing.T) *Formed {
	t.Helper()
	c, ns, tl := f.c, f.ns, f.tl
	Eventually(t, FormTimeout, func() error {
		if err := Cluster.Client.Get(Ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if c.Status.Phase != v1alpha1.PhaseReady || ready == nil || ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("phase %q, Ready condition %+v", c.Status.Phase, ready)
		}
		return nil
	})
	KstatusCurrent(t, c)
	// The watch that times it may trail this poll by a moment.
	Eventually(t, Wait, func() error {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		if tl.clusterReady.IsZero() {
			return fmt.Errorf("the timeline has not seen the NatsCluster Ready yet")
		}
		return nil
	})
	tl.report(t)
	t.Logf("status at first Ready: version %s (%s), %d/%d ready, endpoint %+v",
		c.Status.ServerVersion, c.Status.ServerVersionSource, c.Status.ReadyReplicas, c.Status.Replicas, c.Status.Endpoint)
	replicas := 3
	if c.Spec.Replicas != nil {
		replicas = int(*c.Spec.Replicas)
	}
	return &Formed{NS: ns, Cluster: c, Pods: PodNames(c.Name, replicas)}
}
