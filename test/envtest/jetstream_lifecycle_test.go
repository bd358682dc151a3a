package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/test/testnats"
)

// eventAbout returns nil once an event with reason regards obj and its note
// holds note.
func eventAbout(t *testing.T, obj client.Object, reason, note string) error {
	var list eventsv1.EventList
	if err := k8s.List(ctx(t), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return err
	}
	var seen []string
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() && e.Reason == reason && strings.Contains(e.Note, note) {
			return nil
		}
		seen = append(seen, e.Regarding.Kind+"/"+e.Regarding.Name+" "+e.Reason+": "+e.Note)
	}
	return fmt.Errorf("no event %s about %s with %q; have %q", reason, obj.GetName(), note, seen)
}

// gone returns nil once obj no longer exists.
func gone(t *testing.T, obj client.Object) error {
	err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%s still there, deleted at %v, finalizers %v", obj.GetName(), obj.GetDeletionTimestamp(), obj.GetFinalizers())
}

func TestFinalizerReleasedWhenTheClusterIsGone(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	clusterAt(t, ns, "nats", s)
	st := newStream(ns, "outlives", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "nats"}})
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	// The deletion guard cannot read this cluster's stand-in servers, and
	// so holds it (proven in e2e); the user's word lets it go.
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Annotations = map[string]string{plan.AnnotationDeleteWithData: "true"}
		return k8s.Update(ctx(t), c)
	})
	if err := k8s.Delete(ctx(t), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error { return gone(t, c) })
	// The cluster's deletion reaches the resources that name it.
	jsReady(t, st, metav1.ConditionFalse, "ClusterNotFound")

	if err := k8s.Delete(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error { return gone(t, st) })
	eventually(t, wait, func() error {
		return eventAbout(t, st, "FinalizerReleased", "NatsCluster "+ns+"/nats does not exist")
	})
	cfg, err := serverStream(t, testnats.JetStream(t, s), "outlives")
	if err != nil {
		t.Fatalf("the server stream went with its cluster's resource: %v", err)
	}
	if owner := cfg.Metadata["io.kubenats.owner"]; owner != "Stream/"+ns+"/outlives/"+string(st.UID) {
		t.Fatalf("the server stream left in place has owner %q", owner)
	}
}

func TestFinalizerWaitsWhileNatsIsDown(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	port := freePort(t)
	s := natsServer(t, port)
	st := newStream(ns, "patient", at(serverURL(s)))
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	s.Shutdown()
	s.WaitForShutdown()
	if err := k8s.Delete(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	// The operator tried, could not reach NATS, and says so while it holds
	// the resource.
	jsReady(t, st, metav1.ConditionFalse, "DeletionBlocked")
	if st.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(st, v1alpha1.JetStreamFinalizer) {
		t.Fatalf("deletion %v, finalizers %v; want deleting and held", st.DeletionTimestamp, st.Finalizers)
	}

	// NATS back, empty: the stream is not there to delete, so the
	// finalizer goes.
	natsServer(t, port)
	eventually(t, wait, func() error { return gone(t, st) })
}

// authNatsServer is a nats-server with JetStream that takes user app with
// password only, keeping its data in dir.
func authNatsServer(t *testing.T, port int, dir, password string) *server.Server {
	return testnats.Start(t, port, func(o *server.Options) {
		o.StoreDir = dir
		o.Users = []*server.User{{Username: "app", Password: password}}
	})
}

// appClient connects to s as user app.
func appClient(t *testing.T, s *server.Server, password string) (js.JetStream, error) {
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("app", password), nats.NoReconnect())
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	return js.New(nc)
}

func TestRotatedCredentialsArePickedUp(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	port, dir := freePort(t), t.TempDir()
	s := authNatsServer(t, port, dir, "one")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-login", Labels: optedIn},
		Data:       map[string][]byte{"user": []byte("app"), "password": []byte("one")},
	}
	create(t, secret)
	st := newStream(ns, "rotating", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Connection.CredentialsSecretRef = &v1alpha1.LocalRef{Name: "nats-login"}
		sp.Description = "before"
	})
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	// The server's password changes: the same server, restarted on its port
	// and its data with another password.
	s.Shutdown()
	s.WaitForShutdown()
	s = authNatsServer(t, port, dir, "two")
	if _, err := appClient(t, s, "one"); err == nil {
		t.Fatal("the restarted server still takes the old password")
	}
	j, err := appClient(t, s, "two")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := serverStream(t, j, "rotating"); err != nil || cfg.Description != "before" {
		t.Fatalf("stream after the restart: %q, %v; want it kept with description before", cfg.Description, err)
	}

	// With the old password the operator cannot write.
	update(t, st, func(st *v1alpha1.Stream) { st.Spec.Description = "stale" })
	jsReady(t, st, metav1.ConditionFalse, "ConnectionFailed")

	// The Secret follows, and the spec with it.
	update(t, secret, func(s *corev1.Secret) { s.Data["password"] = []byte("two") })
	update(t, st, func(st *v1alpha1.Stream) { st.Spec.Description = "rotated" })
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "rotating")
		if err != nil {
			return err
		}
		if cfg.Description != "rotated" {
			return fmt.Errorf("server description %q, want rotated", cfg.Description)
		}
		return nil
	})
}
