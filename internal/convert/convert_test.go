package convert

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
)

func documents(t *testing.T, text string) [][]byte {
	t.Helper()
	docs, err := manifest.Documents([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// specOf is the spec of a converted object as JSON fields.
func specOf(t *testing.T, obj client.Object) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Spec
}

// sameValue compares a NACK value with the kubenats one it became, as
// JSON: the conversion must not change a carried value.
func sameValue(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var na, nb any
	_ = json.Unmarshal(ja, &na)
	_ = json.Unmarshal(jb, &nb)
	return reflect.DeepEqual(na, nb)
}

// readByTarget are the NACK fields that say where a resource lives, read
// by targetOf (the connection test checks them), and a Consumer's name,
// which must equal its durable name.
var readByTarget = map[string]bool{"account": true, "servers": true, "jsDomain": true, "name": true}

// checkCarried holds every field of in that its rule carries to out,
// value for value, and returns the paths of those the rules do not carry.
func checkCarried(t *testing.T, id, path string, in, out map[string]any, rules map[string]rule) {
	t.Helper()
	for k, v := range in {
		r, ok := rules[k]
		if ok && r.target && !readByTarget[k] {
			t.Errorf("%s: %s.%s is neither carried nor named as lost", id, path, k)
		}
		if !ok || r.lost != "" || r.target {
			continue
		}
		got, present := out[r.to]
		switch {
		case !present:
			t.Errorf("%s: %s.%s was dropped (want it as %s)", id, path, k, r.to)
		case r.nested != nil && r.nestedL:
			inList, outList := v.([]any), got.([]any)
			if len(inList) != len(outList) {
				t.Errorf("%s: %s.%s has %d items, want %d", id, path, k, len(outList), len(inList))
				continue
			}
			for i := range inList {
				checkCarried(t, id, path+"."+k, inList[i].(map[string]any), outList[i].(map[string]any), r.nested)
			}
		case r.nested != nil:
			checkCarried(t, id, path+"."+k, v.(map[string]any), got.(map[string]any), r.nested)
		case !sameValue(v, got):
			t.Errorf("%s: %s.%s = %v became %s = %v", id, path, k, v, r.to, got)
		}
	}
}

// TestEveryNACKFieldIsCarriedOrNamed: a manifest setting every field of
// every NACK kind (testdata/every-field.yaml, written from NACK's types,
// not from the rules) converts with each field either carried with its
// value or named as not carried, and nothing else named. Careless
// variants caught: a NACK field without a rule (named as unknown, which
// the exact list of losses refuses), a rule to a kubenats name that does
// not exist (the strict decode refuses it), a field silently dropped or
// renamed to the wrong field (the value check), and a lost setting that
// is not reported.
func TestEveryNACKFieldIsCarriedOrNamed(t *testing.T) {
	data, err := os.ReadFile("testdata/every-field.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t, string(data))
	res, err := Convert(docs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, l := range res.Lost {
		lost = append(lost, l.Object+" "+l.Field)
	}
	slices.Sort(lost)
	var want []string
	for _, kind := range []string{"Consumer", "KeyValue", "ObjectStore", "Stream"} {
		for _, f := range []string{"creds", "nkey", "servers", "tls", "tlsFirst"} {
			want = append(want, kind+" team/every spec."+f)
		}
	}
	if !slices.Equal(lost, want) {
		t.Errorf("not carried:\n  %s\nwant:\n  %s", strings.Join(lost, "\n  "), strings.Join(want, "\n  "))
	}
	if want := []string{"team/acct-creds", "team/acct-tls"}; !slices.Equal(res.Secrets, want) {
		t.Errorf("Secrets to label %v, want %v", res.Secrets, want)
	}
	rules := map[string]map[string]rule{"Stream": streamRules, "Consumer": consumerRules, "KeyValue": keyValueRules, "ObjectStore": objectStoreRules}
	if len(res.Objects) != 4 {
		t.Fatalf("%d objects, want 4", len(res.Objects))
	}
	for i, obj := range res.Objects {
		var in nackObject
		if err := yaml.Unmarshal(docs[i+1], &in); err != nil {
			t.Fatal(err)
		}
		out := specOf(t, obj)
		checkCarried(t, in.id(), "spec", in.Spec, out, rules[in.Kind])
		conn := obj.(v1alpha1.JetStreamObject).GetTarget().Connection
		wantConn := &v1alpha1.Connection{Servers: []string{"tls://nats.team.svc:4222"}, JSDomain: "hub",
			CredentialsSecretRef: &v1alpha1.LocalRef{Name: "acct-creds"}, TLSSecretRef: &v1alpha1.LocalRef{Name: "acct-tls"}}
		if !reflect.DeepEqual(conn, wantConn) {
			t.Errorf("%s: connection %+v, want the Account's %+v", in.id(), conn, wantConn)
		}
		if !obj.(v1alpha1.JetStreamObject).GetLifecycle().AdoptExisting {
			t.Errorf("%s: does not adopt what NACK made", in.id())
		}
	}
}
