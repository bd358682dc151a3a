package jetstream

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	timeType  = reflect.TypeFor[time.Time]()
	metaTime  = reflect.TypeFor[metav1.Time]()
	fixedTime = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	fixedMeta = metav1.NewTime(fixedTime)
	otherTime = time.Date(2031, 6, 7, 8, 9, 10, 0, time.UTC)
	otherMeta = metav1.NewTime(otherTime)
)

// fieldDiff lists the leaves where got differs from want, one line each:
// "path: want -> got". Paths use JSON names for API types and Go names for
// nats.go types; times compare with Equal.
func fieldDiff(want, got any) []string {
	var out []string
	diffValue("", reflect.ValueOf(want), reflect.ValueOf(got), &out)
	return out
}

func diffValue(path string, w, g reflect.Value, out *[]string) {
	if w.Type() == timeType || w.Type() == metaTime {
		if !timeOf(w).Equal(timeOf(g)) {
			*out = append(*out, fmt.Sprintf("%s: %v -> %v", path, timeOf(w), timeOf(g)))
		}
		return
	}
	switch w.Kind() {
	case reflect.Struct:
		for i := range w.NumField() {
			f := w.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			diffValue(joinPath(path, fieldName(f)), w.Field(i), g.Field(i), out)
		}
		return
	case reflect.Pointer:
		if !w.IsNil() && !g.IsNil() {
			diffValue(path, w.Elem(), g.Elem(), out)
			return
		}
	case reflect.Map:
		keys := map[string]bool{}
		for _, k := range w.MapKeys() {
			keys[k.String()] = true
		}
		for _, k := range g.MapKeys() {
			keys[k.String()] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			wv, gv := w.MapIndex(reflect.ValueOf(k)), g.MapIndex(reflect.ValueOf(k))
			if !reflect.DeepEqual(show(wv), show(gv)) {
				*out = append(*out, fmt.Sprintf("%s[%s]: %s -> %s", path, k, show(wv), show(gv)))
			}
		}
		return
	case reflect.Slice:
		if w.Len() == g.Len() {
			for i := range w.Len() {
				diffValue(fmt.Sprintf("%s[%d]", path, i), w.Index(i), g.Index(i), out)
			}
			return
		}
	}
	if !reflect.DeepEqual(w.Interface(), g.Interface()) {
		*out = append(*out, fmt.Sprintf("%s: %s -> %s", path, show(w), show(g)))
	}
}

func timeOf(v reflect.Value) time.Time {
	if v.Type() == metaTime {
		return v.Interface().(metav1.Time).Time
	}
	return v.Interface().(time.Time)
}

func fieldName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case f.Anonymous && tag == "":
		return ""
	case tag == "" || tag == "-":
		return f.Name
	}
	return tag
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// show prints a leaf: <absent> for a missing map entry, <nil> for nil,
// quoted strings, and pointers by what they point to.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "<absent>"
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() {
			return "<nil>"
		}
		if v.Kind() == reflect.Pointer {
			return show(v.Elem())
		}
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	}
	if v.Type() == timeType || v.Type() == metaTime {
		return timeOf(v).Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// zeroFields lists the leaves of v that hold their zero value, descending
// into structs, pointers and the elements of slices. It keeps the
// "every field set" fixtures honest when the API grows. Paths in skip
// (and everything under them) are not listed.
func zeroFields(v any, skip ...string) []string {
	var out []string
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		if slices.Contains(skip, path) {
			return
		}
		if v.Type() == metaTime || v.Type() == timeType {
			if timeOf(v).IsZero() {
				out = append(out, path)
			}
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(joinPath(path, fieldName(f)), v.Field(i))
				}
			}
			return
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
				return
			}
		case reflect.Slice:
			if v.Len() > 0 {
				for i := range v.Len() {
					walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
				}
				return
			}
		}
		if v.IsZero() {
			out = append(out, path)
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}

// startJetStream runs an embedded nats-server with JetStream for one test
// and returns a client for it. Everything stops when the test ends.
func startJetStream(t *testing.T) js.JetStream {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	go s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready for connections")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	j, err := js.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return j
}

// hasServerMetadata checks the keys the server adds are there.
func hasServerMetadata(t *testing.T, m map[string]string) {
	t.Helper()
	for _, k := range []string{"_nats.req.level", "_nats.ver", "_nats.level"} {
		if _, ok := m[k]; !ok {
			t.Errorf("server metadata %s missing from %v", k, m)
		}
	}
}
