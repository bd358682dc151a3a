package envtest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

func TestKeyValueCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	kv := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	kv.Spec.Target = at(serverURL(s))
	kv.Spec.Bucket = "settings"
	kv.Spec.History = 5
	create(t, kv)
	jsReady(t, kv, metav1.ConditionTrue, "Synced")

	update(t, kv, func(kv *v1alpha1.KeyValue) { kv.Spec.TTL = "1h0m0s"; kv.Spec.Description = "app settings" })
	eventually(t, wait, func() error {
		b, err := j.KeyValue(ctx(t), "settings")
		if err != nil {
			return err
		}
		st, err := b.Status(ctx(t))
		if err != nil {
			return err
		}
		if st.History() != 5 || st.TTL() != time.Hour {
			return fmt.Errorf("bucket history %d, ttl %s; want 5, 1h", st.History(), st.TTL())
		}
		return nil
	})

	if err := k8s.Delete(ctx(t), kv); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if _, err := j.KeyValue(ctx(t), "settings"); !errors.Is(err, js.ErrBucketNotFound) {
			return fmt.Errorf("bucket still there: %v", err)
		}
		return nil
	})
}

func TestObjectStoreCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	obj := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blobs"}}
	obj.Spec.Target = at(serverURL(s))
	obj.Spec.Bucket = "blobs"
	create(t, obj)
	jsReady(t, obj, metav1.ConditionTrue, "Synced")

	update(t, obj, func(o *v1alpha1.ObjectStore) { o.Spec.Description = "large files"; o.Spec.MaxBytes = 1 << 20 })
	eventually(t, wait, func() error {
		b, err := j.ObjectStore(ctx(t), "blobs")
		if err != nil {
			return err
		}
		st, err := b.Status(ctx(t))
		if err != nil {
			return err
		}
		if st.Description() != "large files" {
			return fmt.Errorf("description %q", st.Description())
		}
		return nil
	})

	if err := k8s.Delete(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if _, err := j.ObjectStore(ctx(t), "blobs"); !errors.Is(err, js.ErrBucketNotFound) {
			return fmt.Errorf("bucket still there: %v", err)
		}
		return nil
	})
}
