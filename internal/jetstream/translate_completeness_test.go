package jetstream

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The completeness tests walk every field of a nats.go config struct, set
// it to a non-zero value one at a time (into nested structs, pointers and
// the first element of slices), run config -> spec -> config and check the
// value survives. A nats.go upgrade that adds a field we do not map fails
// here until the field is mapped or added, with a reason, to the allowlist.

// leafPath is how to reach one field from the root: a field index, a
// pointer to follow (allocated when nil), or the first slice element
// (made when the slice is empty).
type leafStep struct {
	field int // -1 for a pointer or slice step
	kind  reflect.Kind
}

type leaf struct {
	name  string // Go path such as Mirror.OptStartTime or Sources[].Name
	steps []leafStep
}

// leaves lists the fields of t to set, not descending into allowlisted
// paths; used collects the allowlist entries met.
func leaves(t reflect.Type, allow map[string]string, used map[string]bool) []leaf {
	var out []leaf
	var walk func(t reflect.Type, name string, steps []leafStep)
	walk = func(t reflect.Type, name string, steps []leafStep) {
		if _, ok := allow[name]; ok {
			used[name] = true
			return
		}
		steps = slices.Clip(steps)
		switch {
		case t == timeType:
		case t.Kind() == reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() {
					walk(f.Type, joinPath(name, f.Name), append(steps, leafStep{field: i}))
				}
			}
			return
		case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Elem() != timeType:
			walk(t.Elem(), name, append(steps, leafStep{field: -1, kind: reflect.Pointer}))
			return
		case t.Kind() == reflect.Slice && (t.Elem().Kind() == reflect.Struct || t.Elem().Kind() == reflect.Pointer):
			walk(t.Elem(), name+"[]", append(steps, leafStep{field: -1, kind: reflect.Slice}))
			return
		}
		out = append(out, leaf{name: name, steps: steps})
	}
	walk(t, "", nil)
	return out
}

// setLeaf follows the steps from root, making what is missing, and changes
// the value found there to something non-zero and different.
func setLeaf(root reflect.Value, l leaf) {
	v := root
	for _, s := range l.steps {
		switch s.kind {
		case reflect.Pointer:
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		case reflect.Slice:
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		default:
			v = v.Field(s.field)
		}
	}
	bump(v, l.name)
}

// bump changes v: strings grow, numbers (enums and durations included)
// go up by one, bools flip, lists and maps get an entry, times are set.
func bump(v reflect.Value, name string) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(otherTime))
		return
	case v.Kind() == reflect.Pointer && v.Type().Elem() == timeType:
		t := otherTime
		v.Set(reflect.ValueOf(&t))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x-" + name)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Slice:
		e := reflect.New(v.Type().Elem()).Elem()
		bump(e, name)
		v.Set(reflect.Append(v, e))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range v.MapKeys() {
			m.SetMapIndex(k, v.MapIndex(k))
		}
		k := reflect.New(v.Type().Key()).Elem()
		bump(k, name)
		e := reflect.New(v.Type().Elem()).Elem()
		bump(e, name)
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		panic("bump: no rule for " + v.Type().String() + " at " + name)
	}
}

// checkCompleteness runs the walk for config type C. base makes a fresh
// default config; roundTrip is config -> spec -> config; couple keeps
// fields that are one spec field in step (consumer Name and Durable).
func checkCompleteness[C any](t *testing.T, base func() C, roundTrip func(C) (C, error), allow map[string]string, couple func(name string, c *C)) {
	t.Helper()
	used := map[string]bool{}
	ls := leaves(reflect.TypeFor[C](), allow, used)
	for _, l := range ls {
		t.Run(l.name, func(t *testing.T) {
			c := base()
			setLeaf(reflect.ValueOf(&c).Elem(), l)
			if couple != nil {
				couple(l.name, &c)
			}
			if reflect.DeepEqual(c, base()) {
				t.Fatalf("setting %s changed nothing", l.name)
			}
			got, err := roundTrip(c)
			if err != nil {
				t.Fatalf("config -> spec -> config: %v", err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Errorf("%s is lost in config -> spec -> config:\n%s", l.name, strings.Join(fieldDiff(c, got), "\n"))
			}
		})
	}
	for name := range allow {
		if !used[name] {
			t.Errorf("allowlist entry %s matches no field: remove it", name)
		}
	}
	if len(ls) < 5 {
		t.Fatalf("only %d fields found: the walk is broken", len(ls))
	}
}

func TestTranslateStreamCompleteness(t *testing.T) {
	// Deliberately not mapped.
	allow := map[string]string{
		"Template":         "template_owner: stream templates are gone from the server; only it ever set this",
		"Mirror.Domain":    "client-side shorthand: nats.go turns it into External before sending",
		"Sources[].Domain": "client-side shorthand: nats.go turns it into External before sending",
	}
	base := func() js.StreamConfig {
		c, err := StreamConfig(&v1alpha1.StreamSpec{Name: "s"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roundTrip := func(c js.StreamConfig) (js.StreamConfig, error) {
		s := StreamSpecFrom(c)
		return StreamConfig(&s)
	}
	checkCompleteness(t, base, roundTrip, allow, nil)
}

func TestTranslateConsumerCompleteness(t *testing.T) {
	allow := map[string]string{} // every field is mapped
	base := func() js.ConsumerConfig {
		c, err := ConsumerConfig(&v1alpha1.ConsumerSpec{StreamName: "s", DurableName: "d"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roundTrip := func(c js.ConsumerConfig) (js.ConsumerConfig, error) {
		s := ConsumerSpecFrom(c, "s")
		return ConsumerConfig(&s)
	}
	// Name and Durable are both spec.durableName.
	couple := func(name string, c *js.ConsumerConfig) {
		switch name {
		case "Name":
			c.Durable = c.Name
		case "Durable":
			c.Name = c.Durable
		}
	}
	checkCompleteness(t, base, roundTrip, allow, couple)
}

func TestTranslateKeyValueCompleteness(t *testing.T) {
	// Deliberately not mapped.
	allow := map[string]string{
		"Mirror.Domain":    "client-side shorthand: nats.go turns it into External before sending",
		"Sources[].Domain": "client-side shorthand: nats.go turns it into External before sending",
	}
	base := func() js.KeyValueConfig {
		c, err := KeyValueConfig(&v1alpha1.KeyValueSpec{Bucket: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roundTrip := func(c js.KeyValueConfig) (js.KeyValueConfig, error) {
		s := KeyValueSpecFrom(c)
		return KeyValueConfig(&s)
	}
	checkCompleteness(t, base, roundTrip, allow, nil)
}

func TestTranslateObjectStoreCompleteness(t *testing.T) {
	base := func() js.ObjectStoreConfig {
		c, err := ObjectStoreConfig(&v1alpha1.ObjectStoreSpec{Bucket: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roundTrip := func(c js.ObjectStoreConfig) (js.ObjectStoreConfig, error) {
		s := ObjectStoreSpecFrom(c)
		return ObjectStoreConfig(&s)
	}
	checkCompleteness(t, base, roundTrip, nil, nil)
}
