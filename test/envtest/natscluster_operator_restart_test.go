package envtest_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/poll"
)

// TestGeneratedCredentialsSurviveANewOperator: an operator process that
// starts with nothing in memory and cold caches (as after a restart or a
// leader change) finds the credentials, the route CA and certificate
// already made, and keeps them: over a window in which it has reconciled
// the cluster, no generated Secret and no pod template changes.
//
// Not parallel: the second operator reconciles every test's objects
// while it runs.
func TestGeneratedCredentialsSurviveANewOperator(t *testing.T) {
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	names := []string{"nats-auth", "nats-system", "nats-routes", "nats-ca", "nats-routes-tls", "nats-users", "nats-client"}
	before := map[string]map[string][]byte{}
	for _, name := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		get(t, s)
		before[name] = s.Data
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)
	template := maps.Clone(sts.Spec.Template.Annotations)

	stop, err := inprocess.Operator(context.Background(), operatorCfg, jetstream.DialerFunc(testDialer))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	// Wake both operators with a change of the cluster that needs no new
	// credentials, and let the new one have its passes.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Annotations = map[string]string{"example.com/touched": "yes"} })
	poll.Holds(t, 5*time.Second, func() error {
		for _, name := range names {
			s := &corev1.Secret{}
			if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
				return err
			}
			if !maps.EqualFunc(s.Data, before[name], func(a, b []byte) bool { return string(a) == string(b) }) {
				return fmt.Errorf("Secret %s changed under a new operator", name)
			}
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		if !maps.Equal(sts.Spec.Template.Annotations, template) {
			return fmt.Errorf("pod template annotations %v, were %v: the servers would restart", sts.Spec.Template.Annotations, template)
		}
		return nil
	})
}
