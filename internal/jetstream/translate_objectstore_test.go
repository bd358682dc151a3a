package jetstream

import (
	"reflect"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func minimalObjectStore() v1alpha1.ObjectStoreSpec {
	return v1alpha1.ObjectStoreSpec{Bucket: "blobs", Storage: "file", Replicas: 1}
}

func fullObjectStore() v1alpha1.ObjectStoreSpec {
	return v1alpha1.ObjectStoreSpec{
		Bucket:      "blobs",
		Description: "big things",
		TTL:         "720h0m0s",
		MaxBytes:    1 << 30,
		Storage:     "memory",
		Replicas:    3,
		Placement:   &v1alpha1.Placement{Cluster: "east", Tags: []string{"hdd"}},
		Compression: true,
		Metadata:    map[string]string{"team": "media"},
	}
}

func TestTranslateObjectStoreFullFixtureSetsEveryField(t *testing.T) {
	if zero := zeroFields(fullObjectStore(), notTranslated...); len(zero) > 0 {
		t.Errorf("fullObjectStore leaves fields unset, set them: %v", zero)
	}
}

func TestTranslateObjectStoreRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.ObjectStoreSpec
	}{
		{"minimal with defaults", minimalObjectStore()},
		{"every field", fullObjectStore()},
		{"storage file", func() v1alpha1.ObjectStoreSpec { s := fullObjectStore(); s.Storage = "file"; return s }()},
		{"storage memory", func() v1alpha1.ObjectStoreSpec { s := minimalObjectStore(); s.Storage = "memory"; return s }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ObjectStoreConfig(&tc.spec)
			if err != nil {
				t.Fatalf("ObjectStoreConfig: %v", err)
			}
			got := ObjectStoreSpecFrom(c)
			if !reflect.DeepEqual(got, tc.spec) {
				t.Errorf("spec -> config -> spec changed:\n%s", strings.Join(fieldDiff(tc.spec, got), "\n"))
			}
		})
	}
}

func TestTranslateObjectStoreDefaults(t *testing.T) {
	got, err := ObjectStoreConfig(&v1alpha1.ObjectStoreSpec{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := js.ObjectStoreConfig{Bucket: "b", Storage: js.FileStorage, Replicas: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got != want:\n%s", strings.Join(fieldDiff(want, got), "\n"))
	}
}

func TestTranslateObjectStoreErrors(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.ObjectStoreSpec
		want []string
	}{
		{"bad ttl", v1alpha1.ObjectStoreSpec{Bucket: "b", TTL: "forever"}, []string{"spec.ttl", `"forever"`}},
		{"unknown storage", v1alpha1.ObjectStoreSpec{Bucket: "b", Storage: "tape"}, []string{"spec.storage"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ObjectStoreConfig(&tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestTranslateObjectStoreFromStream checks the read-back from the
// OBJ_<bucket> stream is the inverse of what nats.go creates.
func TestTranslateObjectStoreFromStream(t *testing.T) {
	cases := []struct {
		name string
		cfg  js.StreamConfig
		want js.ObjectStoreConfig
	}{{
		name: "every field",
		cfg: js.StreamConfig{
			Name: "OBJ_blobs", Description: "d", MaxAge: time.Hour, MaxBytes: 10, Storage: js.MemoryStorage,
			Replicas: 3, Placement: &js.Placement{Cluster: "c", Tags: []string{"t"}}, Compression: js.S2Compression,
			Metadata: map[string]string{"k": "v"}, Subjects: []string{"$O.blobs.C.>", "$O.blobs.M.>"},
			Discard: js.DiscardNew, AllowRollup: true, AllowDirect: true,
		},
		want: js.ObjectStoreConfig{
			Bucket: "blobs", Description: "d", TTL: time.Hour, MaxBytes: 10, Storage: js.MemoryStorage,
			Replicas: 3, Placement: &js.Placement{Cluster: "c", Tags: []string{"t"}}, Compression: true,
			Metadata: map[string]string{"k": "v"},
		},
	}, {
		name: "defaults",
		cfg:  js.StreamConfig{Name: "OBJ_b", Replicas: 1, MaxBytes: -1},
		want: js.ObjectStoreConfig{Bucket: "b", Replicas: 1, MaxBytes: -1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ObjectStoreConfigFromStream(tc.cfg); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got != want:\n%s", strings.Join(fieldDiff(tc.want, got), "\n"))
			}
		})
	}
}
