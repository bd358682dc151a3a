package envtest_test

import (
	"errors"
	"fmt"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

// serverStream reads a stream's config from the server, as a user would.
func serverStream(t *testing.T, j js.JetStream, name string) (js.StreamConfig, error) {
	st, err := j.Stream(ctx(t), name)
	if err != nil {
		return js.StreamConfig{}, err
	}
	return st.CachedInfo().Config, nil
}

func TestStreamCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	st := newStream(ns, "orders", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.Description = "first" })
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	cfg, err := serverStream(t, j, "orders")
	if err != nil || cfg.Description != "first" || cfg.Storage != js.FileStorage {
		t.Fatalf("server stream = %+v, %v; want description first, file storage", cfg, err)
	}

	update(t, st, func(st *v1alpha1.Stream) { st.Spec.Description = "second"; st.Spec.MaxMsgs = 100 })
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "orders")
		if err != nil {
			return err
		}
		if cfg.Description != "second" || cfg.MaxMsgs != 100 {
			return fmt.Errorf("server has description %q, maxMsgs %d", cfg.Description, cfg.MaxMsgs)
		}
		return nil
	})

	if err := k8s.Delete(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if _, err := serverStream(t, j, "orders"); !errors.Is(err, js.ErrStreamNotFound) {
			return fmt.Errorf("stream still on the server: %v", err)
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(st), st); err == nil {
			return fmt.Errorf("resource still there, finalizers %v", st.Finalizers)
		}
		return nil
	})
}

func TestFieldsResetToZeroReachTheServer(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	st := newStream(ns, "reset", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Description = "x"
		sp.AllowRollup = true
		sp.AllowDirect = true
		sp.MaxMsgs = 1000
		sp.Metadata = map[string]string{"team": "a"}
	})
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	update(t, st, func(st *v1alpha1.Stream) {
		st.Spec.Description, st.Spec.AllowRollup, st.Spec.AllowDirect, st.Spec.MaxMsgs, st.Spec.Metadata = "", false, false, 0, nil
	})
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "reset")
		if err != nil {
			return err
		}
		if cfg.Description != "" || cfg.AllowDirect || cfg.AllowRollup || cfg.MaxMsgs != -1 || cfg.Metadata["team"] != "" {
			return fmt.Errorf("not reset on the server: %+v", cfg)
		}
		return nil
	})
}

func TestDriftIsCorrected(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	st := newStream(ns, "drift", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.MaxMsgs = 10 })
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	t.Run("edited on the server", func(t *testing.T) {
		cfg, err := serverStream(t, j, "drift")
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxMsgs = 999
		if _, err := j.UpdateStream(ctx(t), cfg); err != nil {
			t.Fatal(err)
		}
		eventually(t, wait, func() error {
			cfg, err := serverStream(t, j, "drift")
			if err != nil || cfg.MaxMsgs != 10 {
				return fmt.Errorf("maxMsgs %d (%v), want 10 restored", cfg.MaxMsgs, err)
			}
			return nil
		})
		eventually(t, wait, func() error { return eventWithReason(t, ns, "DriftCorrected") })
	})
	t.Run("deleted on the server", func(t *testing.T) {
		if err := j.DeleteStream(ctx(t), "drift"); err != nil {
			t.Fatal(err)
		}
		eventually(t, wait, func() error {
			_, err := serverStream(t, j, "drift")
			return err
		})
		eventually(t, wait, func() error { return eventWithReason(t, ns, "Recreated") })
	})
}

func TestPreventDeleteAndPreventUpdate(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)

	kept := newStream(ns, "kept", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.PreventDelete = true })
	create(t, kept)
	jsReady(t, kept, metav1.ConditionTrue, "Synced")
	if err := k8s.Delete(ctx(t), kept); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(kept), kept); err == nil {
			return fmt.Errorf("resource still there")
		}
		return nil
	})
	if _, err := serverStream(t, j, "kept"); err != nil {
		t.Fatalf("preventDelete: the server stream is gone: %v", err)
	}

	frozen := newStream(ns, "frozen", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.MaxMsgs = 5 })
	create(t, frozen)
	jsReady(t, frozen, metav1.ConditionTrue, "Synced")
	update(t, frozen, func(st *v1alpha1.Stream) { st.Spec.PreventUpdate = true })
	jsReady(t, frozen, metav1.ConditionTrue, "Synced")
	cfg, err := serverStream(t, j, "frozen")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxMsgs = 50
	if _, err := j.UpdateStream(ctx(t), cfg); err != nil {
		t.Fatal(err)
	}
	jsReady(t, frozen, metav1.ConditionFalse, "Drifted")
	if cfg, _ := serverStream(t, j, "frozen"); cfg.MaxMsgs != 50 {
		t.Fatalf("preventUpdate: the operator wrote maxMsgs %d back", cfg.MaxMsgs)
	}
}

func TestAdoptionIsRefusedUnlessAsked(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	if _, err := j.CreateStream(ctx(t), js.StreamConfig{Name: "legacy", Subjects: []string{"legacy.>"}, Description: "theirs"}); err != nil {
		t.Fatal(err)
	}
	st := newStream(ns, "legacy", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { sp.Description = "ours" })
	create(t, st)
	jsReady(t, st, metav1.ConditionFalse, "AlreadyExists")
	if cfg, _ := serverStream(t, j, "legacy"); cfg.Description != "theirs" {
		t.Fatalf("a refused adoption wrote the stream: description %q", cfg.Description)
	}
	// Deleting a resource that never owned the stream leaves it alone.
	if err := k8s.Delete(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(st), st); err == nil {
			return fmt.Errorf("resource still there")
		}
		return nil
	})
	if _, err := serverStream(t, j, "legacy"); err != nil {
		t.Fatalf("the foreign stream was deleted: %v", err)
	}

	adopter := newStream(ns, "legacy", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Description = "ours"
		sp.AdoptExisting = true
	})
	create(t, adopter)
	jsReady(t, adopter, metav1.ConditionTrue, "Synced")
	if cfg, _ := serverStream(t, j, "legacy"); cfg.Description != "ours" {
		t.Fatalf("adopted stream description %q, want ours", cfg.Description)
	}
	eventually(t, wait, func() error { return eventWithReason(t, ns, "Adopted") })
}
