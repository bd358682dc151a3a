package jetstream

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Kinds FuzzTranslate picks from with its first argument.
const (
	fuzzStream = iota
	fuzzConsumer
	fuzzKeyValue
	fuzzObjectStore
	fuzzKinds
)

// FuzzTranslate feeds arbitrary specs (JSON, as a tenant writes them, here
// without the CRD's validation) to the spec-to-server translation of each
// kind. It may refuse; it may not panic; and what it sends to the server is
// stable: translated back into a spec and forward again, it is unchanged,
// so the operator never sees drift of its own making.
func FuzzTranslate(f *testing.F) {
	seed := func(kind uint8, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(kind, raw)
	}
	seed(fuzzStream, minimalStream())
	seed(fuzzStream, fullStream())
	seed(fuzzConsumer, minimalConsumer())
	seed(fuzzConsumer, fullConsumer())
	seed(fuzzKeyValue, minimalKeyValue())
	seed(fuzzKeyValue, fullKeyValue())
	seed(fuzzObjectStore, minimalObjectStore())
	seed(fuzzObjectStore, fullObjectStore())
	f.Add(uint8(fuzzStream), []byte(`{"name":"S","maxAge":"-1s","duplicateWindow":"9999999999h","replicas":-3}`))
	f.Add(uint8(fuzzConsumer), []byte(`{"streamName":"S","ackWait":"1e400s","backoff":["1s","-1s"],"pauseUntil":"x"}`))
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		switch kind % fuzzKinds {
		case fuzzStream:
			var s v1alpha1.StreamSpec
			if json.Unmarshal(raw, &s) != nil {
				return
			}
			c, err := StreamConfig(&s)
			if err != nil {
				return
			}
			back := StreamSpecFrom(c)
			again, err := StreamConfig(&back)
			stable(t, c, again, err)
		case fuzzConsumer:
			var s v1alpha1.ConsumerSpec
			if json.Unmarshal(raw, &s) != nil {
				return
			}
			c, err := ConsumerConfig(&s)
			if err != nil {
				return
			}
			back := ConsumerSpecFrom(c, s.StreamName)
			again, err := ConsumerConfig(&back)
			stable(t, c, again, err)
		case fuzzKeyValue:
			var s v1alpha1.KeyValueSpec
			if json.Unmarshal(raw, &s) != nil {
				return
			}
			c, err := KeyValueConfig(&s)
			if err != nil {
				return
			}
			back := KeyValueSpecFrom(c)
			again, err := KeyValueConfig(&back)
			stable(t, c, again, err)
		case fuzzObjectStore:
			var s v1alpha1.ObjectStoreSpec
			if json.Unmarshal(raw, &s) != nil {
				return
			}
			c, err := ObjectStoreConfig(&s)
			if err != nil {
				return
			}
			back := ObjectStoreSpecFrom(c)
			again, err := ObjectStoreConfig(&back)
			stable(t, c, again, err)
		}
	})
}

func stable[C any](t *testing.T, first, again C, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("the spec read back from %+v does not translate: %v", first, err)
	}
	if !reflect.DeepEqual(first, again) {
		t.Fatalf("translation is not stable:\n%+v\n%+v", first, again)
	}
}
