package envtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Every JetStream object below that the API server accepts names a
// NatsCluster that does not exist: the operator then has nothing to write
// on any server, and deleting the object releases its finalizer at once.
var nowhere = v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "absent"}}

// asUnstructured is obj as the JSON a client sends, ready for edits the Go
// types cannot express (a zero the omitempty tags would drop).
func asUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, k8s.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u
}

// refused checks that err is the API server's 422 refusal (reason Invalid)
// and that the text a user reads holds every one of want.
func refused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("accepted by the API server, want it refused with %q", want)
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("refused with reason %q, want Invalid: %v", apierrors.ReasonForError(err), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

// deleteLater deletes obj when the test ends, should it have been created.
func deleteLater(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := client.IgnoreNotFound(k8s.Delete(c, obj)); err != nil {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}

func TestJetStreamValidationRejectsInvalidSpecs(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	stream := func(edit func(*v1alpha1.StreamSpec)) func(name string) client.Object {
		return func(name string) client.Object { return newStream(ns, name, nowhere, edit) }
	}
	consumer := func(edit func(*v1alpha1.ConsumerSpec)) func(name string) client.Object {
		return func(name string) client.Object { return newConsumer(ns, name, "orders", nowhere, edit) }
	}
	kv := func(edit func(*v1alpha1.KeyValueSpec)) func(name string) client.Object {
		return func(name string) client.Object {
			o := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			o.Spec.Target, o.Spec.Bucket = nowhere, name
			edit(&o.Spec)
			return o
		}
	}
	objectStore := func(edit func(*v1alpha1.ObjectStoreSpec)) func(name string) client.Object {
		return func(name string) client.Object {
			o := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			o.Spec.Target, o.Spec.Bucket = nowhere, name
			edit(&o.Spec)
			return o
		}
	}
	url := func(u string) v1alpha1.Target { return at(u) }

	cases := []struct {
		name string // also the object's name
		obj  func(name string) client.Object
		// raw edits the spec as sent, for what the Go types cannot say.
		raw  func(spec map[string]any)
		want []string
	}{
		// Targets, shared by all four kinds.
		{name: "stream-no-target",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Target = v1alpha1.Target{} }),
			want: []string{"set exactly one of cluster or connection"}},
		{name: "consumer-both-targets",
			obj: consumer(func(s *v1alpha1.ConsumerSpec) {
				s.Target = url("nats://127.0.0.1:4222")
				s.Cluster = &v1alpha1.ClusterRef{Name: "nats"}
			}),
			want: []string{"set exactly one of cluster or connection"}},
		{name: "kv-no-target",
			obj:  kv(func(s *v1alpha1.KeyValueSpec) { s.Target = v1alpha1.Target{} }),
			want: []string{"set exactly one of cluster or connection"}},
		{name: "stream-no-servers",
			obj: stream(func(s *v1alpha1.StreamSpec) {
				s.Target = url("nats://127.0.0.1:4222")
				s.Connection.Servers = []string{}
			}),
			want: []string{"spec.connection.servers", "should have at least 1 items"}},
		{name: "stream-credentials-in-url",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Target = url("nats://u:p@host:4222") }),
			want: []string{"spec.connection.servers[0]", "should match"}},
		{name: "stream-two-urls-in-one-entry",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Target = url("nats://a:4222,nats://b:4222") }),
			want: []string{"spec.connection.servers[0]", "should match"}},
		{name: "stream-websocket-url",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Target = url("ws://host:8080") }),
			want: []string{"spec.connection.servers[0]", "should match"}},
		{name: "objectstore-http-url",
			obj:  objectStore(func(s *v1alpha1.ObjectStoreSpec) { s.Target = url("http://host:4222") }),
			want: []string{"spec.connection.servers[0]", "should match"}},

		// Streams.
		{name: "stream-name-dot",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Name = "orders.eu" }),
			want: []string{"spec.name", "should match"}},
		{name: "stream-name-space",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Name = "my orders" }),
			want: []string{"spec.name", "should match"}},
		{name: "stream-retention-fifo",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Retention = "fifo" }),
			want: []string{"spec.retention", `Unsupported value: "fifo"`}},
		{name: "stream-storage-disk",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Storage = "disk" }),
			want: []string{"spec.storage", `Unsupported value: "disk"`}},
		{name: "stream-replicas-0",
			obj:  stream(func(*v1alpha1.StreamSpec) {}),
			raw:  func(s map[string]any) { s["replicas"] = int64(0) },
			want: []string{"spec.replicas", "should be greater than or equal to 1"}},
		{name: "stream-replicas-6",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.Replicas = 6 }),
			want: []string{"spec.replicas", "should be less than or equal to 5"}},
		{name: "stream-maxage-words",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.MaxAge = "10 minutes" }),
			want: []string{"spec.maxAge", "should match"}},
		{name: "stream-duplicatewindow-no-unit",
			obj:  stream(func(s *v1alpha1.StreamSpec) { s.DuplicateWindow = "2" }),
			want: []string{"spec.duplicateWindow", "should match"}},
		{name: "stream-mirror-with-subjects",
			obj: stream(func(s *v1alpha1.StreamSpec) {
				s.Mirror = &v1alpha1.StreamSource{Name: "origin"}
				s.Subjects = []string{"copy.>"}
			}),
			want: []string{"a mirror has no subjects and no sources"}},
		{name: "stream-discardpersubject-discard-old",
			obj: stream(func(s *v1alpha1.StreamSpec) {
				s.DiscardPerSubject = true
				s.MaxMsgsPerSubject = 10
			}),
			want: []string{"discardPerSubject needs discard new and maxMsgsPerSubject above 0"}},

		// Consumers.
		{name: "consumer-ackpolicy-maybe",
			obj:  consumer(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "maybe" }),
			want: []string{"spec.ackPolicy", `Unsupported value: "maybe"`}},
		{name: "consumer-startseq-missing",
			obj:  consumer(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "byStartSequence" }),
			want: []string{"deliverPolicy byStartSequence needs optStartSeq"}},
		{name: "consumer-two-filters",
			obj: consumer(func(s *v1alpha1.ConsumerSpec) {
				s.FilterSubject = "orders.eu"
				s.FilterSubjects = []string{"orders.us"}
			}),
			want: []string{"set filterSubject or filterSubjects, not both"}},
		{name: "consumer-group-without-subject",
			obj:  consumer(func(s *v1alpha1.ConsumerSpec) { s.DeliverGroup = "workers" }),
			want: []string{"deliverGroup needs deliverSubject (push)"}},
		{name: "consumer-flowcontrol-no-heartbeat",
			obj: consumer(func(s *v1alpha1.ConsumerSpec) {
				s.DeliverSubject = "deliver.orders"
				s.FlowControl = true
			}),
			want: []string{"flowControl needs heartbeatInterval"}},
		{name: "consumer-ackfc-pull",
			obj:  consumer(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "flow_control" }),
			want: []string{"ackPolicy flow_control needs deliverSubject (push)"}},
		{name: "consumer-ackfc-maxdeliver",
			obj: consumer(func(s *v1alpha1.ConsumerSpec) {
				s.AckPolicy, s.MaxDeliver = "flow_control", 5
				s.DeliverSubject, s.FlowControl, s.HeartbeatInterval = "deliver.orders", true, "1s"
			}),
			want: []string{"ackPolicy flow_control redelivers by flow control"}},
		{name: "source-consumer-dot",
			obj: stream(func(s *v1alpha1.StreamSpec) {
				s.Subjects = nil
				s.Sources = []v1alpha1.StreamSource{{Name: "ORIGIN", Consumer: &v1alpha1.SourceConsumer{Name: "a.b"}}}
			}),
			want: []string{"spec.sources[0].consumer.name", "should match"}},
		{name: "consumer-durable-dot",
			obj:  consumer(func(s *v1alpha1.ConsumerSpec) { s.DurableName = "a.b" }),
			want: []string{"spec.durableName", "should match"}},

		// Buckets.
		{name: "kv-bucket-dot",
			obj:  kv(func(s *v1alpha1.KeyValueSpec) { s.Bucket = "a.b" }),
			want: []string{"spec.bucket", "should match"}},
		{name: "kv-history-65",
			obj:  kv(func(s *v1alpha1.KeyValueSpec) { s.History = 65 }),
			want: []string{"spec.history", "should be less than or equal to 64"}},
		{name: "objectstore-bucket-space",
			obj:  objectStore(func(s *v1alpha1.ObjectStoreSpec) { s.Bucket = "my files" }),
			want: []string{"spec.bucket", "should match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := asUnstructured(t, tc.obj(tc.name))
			if tc.raw != nil {
				spec, _ := u.Object["spec"].(map[string]any)
				tc.raw(spec)
			}
			err := k8s.Create(ctx(t), u)
			if err == nil {
				deleteLater(t, u)
			}
			refused(t, err, tc.want...)
		})
	}

	// The same builders make objects the API server takes: the refusals
	// above are the edits', not the builders'.
	t.Run("valid", func(t *testing.T) {
		for i, build := range []func(string) client.Object{
			stream(func(*v1alpha1.StreamSpec) {}),
			consumer(func(*v1alpha1.ConsumerSpec) {}),
			kv(func(*v1alpha1.KeyValueSpec) {}),
			objectStore(func(*v1alpha1.ObjectStoreSpec) {}),
		} {
			obj := build(fmt.Sprintf("valid-%d", i))
			if err := k8s.Create(ctx(t), obj); err != nil {
				t.Fatalf("a valid %T was refused: %v", obj, err)
			}
			deleteLater(t, obj)
		}
	})
}

// updateRefused re-reads obj, applies edit and writes it, retrying only on
// conflicts with the operator's own writes; it returns the API server's
// answer.
func updateRefused[T client.Object](t *testing.T, obj T, edit func(T)) error {
	t.Helper()
	for range 50 {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		edit(obj)
		err := k8s.Update(ctx(t), obj)
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	t.Fatal("50 conflicts in a row")
	return nil
}

func TestJetStreamValidationRejectsInvalidUpdates(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type change struct {
		name string // also the object's name
		// create is the valid object, update changes it.
		create func(name string) client.Object
		update func(client.Object)
		// want is the refusal's text; empty means the change is accepted.
		want []string
		// check reads the object back after an accepted change.
		check func(client.Object) error
	}
	stream := func(edit func(*v1alpha1.StreamSpec)) func(string) client.Object {
		return func(name string) client.Object { return newStream(ns, name, nowhere, edit) }
	}
	consumer := func(edit func(*v1alpha1.ConsumerSpec)) func(string) client.Object {
		return func(name string) client.Object { return newConsumer(ns, name, "orders", nowhere, edit) }
	}
	onStream := func(edit func(*v1alpha1.StreamSpec)) func(client.Object) {
		return func(o client.Object) { edit(&o.(*v1alpha1.Stream).Spec) }
	}
	onConsumer := func(edit func(*v1alpha1.ConsumerSpec)) func(client.Object) {
		return func(o client.Object) { edit(&o.(*v1alpha1.Consumer).Spec) }
	}
	none := func(*v1alpha1.StreamSpec) {}
	mirrorOf := func(origin string) func(*v1alpha1.StreamSpec) {
		return func(s *v1alpha1.StreamSpec) { s.Subjects, s.Mirror = nil, &v1alpha1.StreamSource{Name: origin} }
	}
	plain := func(*v1alpha1.ConsumerSpec) {}
	push := func(s *v1alpha1.ConsumerSpec) {
		s.DeliverSubject, s.FlowControl, s.HeartbeatInterval = "deliver.orders", true, "5s"
	}
	startTime := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))

	changes := []change{
		{name: "stream-rename", create: stream(none),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Name = "renamed" }),
			want:   []string{"name is immutable: a renamed stream is a new stream"}},
		{name: "stream-file-to-memory", create: stream(none),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Storage = "memory" }),
			want:   []string{"storage cannot change on the server"}},
		{name: "stream-limits-to-workqueue", create: stream(none),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Retention = "workqueue" }),
			want:   []string{"retention cannot change to or from workqueue"}},
		{name: "stream-workqueue-to-limits", create: stream(func(s *v1alpha1.StreamSpec) { s.Retention = "workqueue" }),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Retention = "limits" }),
			want:   []string{"retention cannot change to or from workqueue"}},
		{name: "stream-unseal", create: stream(func(s *v1alpha1.StreamSpec) { s.Sealed = true }),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Sealed = false }),
			want:   []string{"a sealed stream cannot be unsealed"}},
		{name: "stream-denydelete-off", create: stream(func(s *v1alpha1.StreamSpec) { s.DenyDelete = true }),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.DenyDelete = false }),
			want:   []string{"denyDelete cannot be turned off on the server"}},
		{name: "stream-mirror-added", create: stream(none),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Subjects, s.Mirror = nil, &v1alpha1.StreamSource{Name: "origin"} }),
			want:   []string{"mirror cannot be added or pointed elsewhere"}},
		{name: "stream-mirror-elsewhere", create: stream(mirrorOf("origin")),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Mirror.Name = "other" }),
			want:   []string{"mirror cannot be added or pointed elsewhere"}},
		{name: "consumer-durable-rename", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.DurableName = "renamed" }),
			want:   []string{"durableName is immutable: a renamed consumer is a new consumer"}},
		{name: "consumer-other-stream", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.StreamName = "invoices" }),
			want:   []string{"streamName is immutable"}},
		{name: "consumer-ackpolicy", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "none" }),
			want:   []string{"ackPolicy cannot change on the server"}},
		{name: "consumer-pull-to-push", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.DeliverSubject = "deliver.orders" }),
			want:   []string{"a consumer cannot switch between pull and push"}},
		{name: "consumer-optstartseq", create: consumer(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy, s.OptStartSeq = "byStartSequence", 5 }),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.OptStartSeq = 6 }),
			want:   []string{"optStartSeq cannot change on the server"}},
		{name: "consumer-optstarttime", create: consumer(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy, s.OptStartTime = "byStartTime", &startTime }),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.OptStartTime = &metav1.Time{Time: startTime.Add(time.Hour)} }),
			want:   []string{"optStartTime cannot change on the server"}},
		{name: "consumer-heartbeat", create: consumer(push),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.HeartbeatInterval = "10s" }),
			want:   []string{"heartbeatInterval cannot change on the server"}},
		{name: "consumer-flowcontrol-off", create: consumer(push),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.FlowControl = false }),
			want:   []string{"flowControl cannot change on the server"}},
		{name: "consumer-maxwaiting", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.MaxWaiting = 64 }),
			want:   []string{"maxWaiting cannot change on the server"}},
		{name: "kv-rename",
			create: func(name string) client.Object {
				o := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				o.Spec.Target, o.Spec.Bucket = nowhere, name
				return o
			},
			update: func(o client.Object) { o.(*v1alpha1.KeyValue).Spec.Bucket = "renamed" },
			want:   []string{"bucket is immutable: a renamed bucket is a new bucket"}},

		// What may change, does.
		// A standby promoted: the mirror removed, subjects of its own.
		{name: "stream-mirror-promoted", create: stream(mirrorOf("origin")),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Mirror, s.Subjects = nil, []string{"promoted.>"} }),
			check: func(o client.Object) error {
				if s := o.(*v1alpha1.Stream).Spec; s.Mirror != nil || len(s.Subjects) != 1 {
					return fmt.Errorf("mirror %v, subjects %v after the promotion", s.Mirror, s.Subjects)
				}
				return nil
			}},
		{name: "stream-description", create: stream(func(s *v1alpha1.StreamSpec) { s.Description = "first" }),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Description = "second" }),
			check: func(o client.Object) error {
				if d := o.(*v1alpha1.Stream).Spec.Description; d != "second" {
					return fmt.Errorf("description %q, want second", d)
				}
				return nil
			}},
		{name: "stream-limits-to-interest", create: stream(none),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.Retention = "interest" }),
			check: func(o client.Object) error {
				if r := o.(*v1alpha1.Stream).Spec.Retention; r != "interest" {
					return fmt.Errorf("retention %q, want interest", r)
				}
				return nil
			}},
		{name: "stream-maxmsgs", create: stream(func(s *v1alpha1.StreamSpec) { s.MaxMsgs = 10 }),
			update: onStream(func(s *v1alpha1.StreamSpec) { s.MaxMsgs = 1000 }),
			check: func(o client.Object) error {
				if n := o.(*v1alpha1.Stream).Spec.MaxMsgs; n != 1000 {
					return fmt.Errorf("maxMsgs %d, want 1000", n)
				}
				return nil
			}},
		{name: "consumer-heartbeat-same-duration", create: consumer(push),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.HeartbeatInterval = "5000ms" }),
			check: func(o client.Object) error {
				if h := o.(*v1alpha1.Consumer).Spec.HeartbeatInterval; h != "5000ms" {
					return fmt.Errorf("heartbeatInterval %q, want 5000ms", h)
				}
				return nil
			}},
		{name: "consumer-pause", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.PauseUntil = &startTime }),
			check: func(o client.Object) error {
				if p := o.(*v1alpha1.Consumer).Spec.PauseUntil; p == nil || !p.Equal(&startTime) {
					return fmt.Errorf("pauseUntil %v, want %v", p, startTime)
				}
				return nil
			}},
		{name: "consumer-description", create: consumer(plain),
			update: onConsumer(func(s *v1alpha1.ConsumerSpec) { s.Description = "audit" }),
			check: func(o client.Object) error {
				if d := o.(*v1alpha1.Consumer).Spec.Description; d != "audit" {
					return fmt.Errorf("description %q, want audit", d)
				}
				return nil
			}},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.create(tc.name)
			if err := k8s.Create(ctx(t), obj); err != nil {
				t.Fatalf("creating the valid object: %v", err)
			}
			deleteLater(t, obj)
			err := updateRefused(t, obj, tc.update)
			if len(tc.want) > 0 {
				refused(t, err, tc.want...)
				return
			}
			if err != nil {
				t.Fatalf("an allowed change was refused: %v", err)
			}
			fresh := tc.create(tc.name)
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), fresh); err != nil {
				t.Fatal(err)
			}
			if err := tc.check(fresh); err != nil {
				t.Fatal(err)
			}
		})
	}
}
