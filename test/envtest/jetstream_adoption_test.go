package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// deleteAndWait deletes obj and waits until it is gone.
func deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Delete(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error { return gone(t, obj) })
}

// TestAdoptionCannotTakeAnotherTenantsStream: a Stream in namespace a made
// stream SHARED; a Stream in namespace b that names the same server stream
// and asks to adopt it is refused, without saying whose it is, and
// deleting b's resource leaves a's stream in place and a's resource in
// charge of it.
func TestAdoptionCannotTakeAnotherTenantsStream(t *testing.T) {
	t.Parallel()
	a, b := namespace(t), namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	owner := newStream(a, "orders", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Name = "SHARED"
		sp.Description = "a's"
	})
	create(t, owner)
	jsReady(t, owner, metav1.ConditionTrue, "Synced")

	thief := newStream(b, "orders", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Name = "SHARED"
		sp.Description = "b's"
		sp.AdoptExisting = true
	})
	create(t, thief)
	jsReady(t, thief, metav1.ConditionFalse, "AlreadyExists")
	if msg := meta.FindStatusCondition(thief.Status.Conditions, v1alpha1.ConditionReady).Message; strings.Contains(msg, a) {
		t.Fatalf("the refusal %q names the other tenant's namespace", msg)
	}
	mark := fmt.Sprintf("Stream/%s/orders/%s", a, owner.UID)
	untouched := func() error {
		cfg, err := serverStream(t, j, "SHARED")
		switch {
		case err != nil:
			return err
		case cfg.Description != "a's" || cfg.Metadata["io.kubenats.owner"] != mark:
			return fmt.Errorf("stream SHARED now has description %q and owner %q", cfg.Description, cfg.Metadata["io.kubenats.owner"])
		}
		return nil
	}
	// Retries (the owner may go) must not take it either.
	poll.Holds(t, 2*time.Second, untouched)

	deleteAndWait(t, thief)
	if err := untouched(); err != nil {
		t.Fatalf("after the adopter's deletion: %v", err)
	}
	jsReady(t, owner, metav1.ConditionTrue, "Synced")
}

// TestAdoptionOfAGoneOwnersStream: once the resource that made a stream is
// gone (here deleted with preventDelete, which keeps the stream), a
// resource asking to adopt takes it over. A resource of the very same
// namespace and name, made again, does not inherit the stream unasked:
// the mark carries the UID of the resource that made it.
func TestAdoptionOfAGoneOwnersStream(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	first := newStream(ns, "kept", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.PreventDelete = true })
	create(t, first)
	jsReady(t, first, metav1.ConditionTrue, "Synced")
	deleteAndWait(t, first)

	again := newStream(ns, "kept", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.Description = "again" })
	create(t, again)
	jsReady(t, again, metav1.ConditionFalse, "AlreadyExists")
	if cfg, _ := serverStream(t, j, "kept"); cfg.Description != "" {
		t.Fatalf("the re-created resource wrote the stream it did not adopt: description %q", cfg.Description)
	}

	update(t, again, func(st *v1alpha1.Stream) { st.Spec.AdoptExisting = true })
	jsReady(t, again, metav1.ConditionTrue, "Synced")
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "kept")
		if err == nil && (cfg.Description != "again" || cfg.Metadata["io.kubenats.owner"] != fmt.Sprintf("Stream/%s/kept/%s", ns, again.UID)) {
			err = fmt.Errorf("stream kept: description %q, owner %q", cfg.Description, cfg.Metadata["io.kubenats.owner"])
		}
		return err
	})
}

// TestGuestCannotAdoptTheClusterTeamsStream: a NatsCluster lets namespace
// guest in (spec.jetstream.allowedNamespaces); its own team made stream
// LEGACY with natscli (no kubenats mark). A Stream in guest that names
// LEGACY and sets adoptExisting is refused, and keeps being refused while
// it retries, with LEGACY untouched; the same Stream in the cluster's own
// namespace adopts it. Careless variant watched failing: main before
// guestMayAdopt, where the guest's Stream turned Synced and rewrote
// LEGACY's subjects and description.
func TestGuestCannotAdoptTheClusterTeamsStream(t *testing.T) {
	t.Parallel()
	home, guest := namespace(t), namespace(t)
	s := natsServer(t, 0)
	clusterAt(t, home, "shared", s, guest)
	j := testnats.JetStream(t, s)
	if _, err := j.CreateStream(ctx(t), js.StreamConfig{Name: "LEGACY", Subjects: []string{"legacy.>"}, Description: "the team's"}); err != nil {
		t.Fatal(err)
	}
	ref := v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Namespace: home, Name: "shared"}}
	adopt := func(sp *v1alpha1.StreamSpec) {
		sp.Name, sp.Subjects, sp.Description, sp.AdoptExisting = "LEGACY", []string{"taken.>"}, "taken", true
	}
	thief := newStream(guest, "legacy", ref, adopt)
	create(t, thief)
	jsReady(t, thief, metav1.ConditionFalse, "AlreadyExists")
	untouched := func() error {
		cfg, err := serverStream(t, j, "LEGACY")
		switch {
		case err != nil:
			return err
		case cfg.Description != "the team's" || cfg.Metadata["io.kubenats.owner"] != "":
			return fmt.Errorf("stream LEGACY now has description %q and owner %q", cfg.Description, cfg.Metadata["io.kubenats.owner"])
		}
		return nil
	}
	poll.Holds(t, 2*time.Second, untouched)
	deleteAndWait(t, thief)
	if err := untouched(); err != nil {
		t.Fatalf("after the guest's Stream was deleted: %v", err)
	}

	owner := newStream(home, "legacy", ref, adopt)
	create(t, owner)
	jsReady(t, owner, metav1.ConditionTrue, "Synced")
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "LEGACY")
		if err == nil && cfg.Metadata["io.kubenats.owner"] != fmt.Sprintf("Stream/%s/legacy/%s", home, owner.UID) {
			err = fmt.Errorf("stream LEGACY: owner %q", cfg.Metadata["io.kubenats.owner"])
		}
		return err
	})
}
