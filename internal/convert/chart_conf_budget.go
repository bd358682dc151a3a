package convert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// nats.conf's variables share values: `b: [$a, $a]` holds a twice, not a
// copy, so forty lines of doubling parse in microseconds into a tree whose
// every walk (json.Marshal, fmt.Sprint, the translation itself) meets a
// trillion values. The operator parses a tenant's ConfigMap for a
// takeover, so the tree is measured before anything else reads it, by a
// walk that counts a shared value each time it is reached and stops at
// the first limit passed: its own work is bounded by the limits, whatever
// the tree.

// confLimits bound a parsed nats.conf as its readers will see it, its
// shared values expanded.
type confLimits struct {
	// values counts every value: each block's entries, each list's items.
	values int
	// depth counts the blocks and lists around the deepest value.
	depth int
	// bytes counts the keys and strings (numbers and the like as 8).
	bytes int
}

// chartConfLimits are far above what the chart renders (about 40 values,
// 4 deep, under 1 KiB) and what a hand-written nats.conf of many accounts
// holds, and keep every later walk of the tree a matter of milliseconds
// and a few MiB. The text itself is a ConfigMap's, at most 1 MiB.
var chartConfLimits = confLimits{values: 20000, depth: 32, bytes: 1 << 20}

// confMeasure is one walk's running count.
type confMeasure struct {
	limits confLimits
	values int
	bytes  int
}

// checkConfTree measures the tree m: an error names the first limit
// passed, or the key path of the first reference to a name nats.conf does
// not define (undefinedMarker); never a value.
func checkConfTree(m map[string]any, limits confLimits) error {
	w := &confMeasure{limits: limits, values: 1}
	return w.walk(m, nil)
}

func (w *confMeasure) walk(v any, path []string) error {
	if len(path) > w.limits.depth {
		return w.over(fmt.Sprintf("more than %d blocks and lists deep", w.limits.depth), path)
	}
	switch v := v.(type) {
	case map[string]any:
		// Counted before they are sorted: a block's size alone can pass
		// the limit, and sorting it would be work past it.
		if err := w.count(len(v), path); err != nil {
			return err
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := w.addBytes(len(k), path); err != nil {
				return err
			}
			if err := w.walk(v[k], append(path, k)); err != nil {
				return err
			}
		}
	case []any:
		if err := w.count(len(v), path); err != nil {
			return err
		}
		for i, item := range v {
			if err := w.walk(item, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
				return err
			}
		}
	case string:
		if name, ok := strings.CutPrefix(v, undefinedMarker); ok {
			return fmt.Errorf("nats.conf %s refers to $%s, which neither nats.conf (before it) nor the nats container's env defines: kubenats never looks it up in its own environment", keyPath(path), bounded(name))
		}
		return w.addBytes(len(v), path)
	default:
		return w.addBytes(8, path)
	}
	return nil
}

func (w *confMeasure) count(n int, path []string) error {
	w.values += n
	if w.values > w.limits.values {
		return w.over(fmt.Sprintf("more than %d values", w.limits.values), path)
	}
	return nil
}

func (w *confMeasure) addBytes(n int, path []string) error {
	w.bytes += n
	if w.bytes > w.limits.bytes {
		return w.over(fmt.Sprintf("more than %d bytes of keys and strings", w.limits.bytes), path)
	}
	return nil
}

func (w *confMeasure) over(limit string, path []string) error {
	return fmt.Errorf("nats.conf is too large for kubenats once its variables are expanded: %s (passed at %s); variables share values, so a few lines can stand for millions", limit, keyPath(path))
}

// maxKeyPath bounds a key path in a message: keys are the tenant's too.
const maxKeyPath = 200

// bounded cuts a name the tenant wrote for a message.
func bounded(s string) string {
	if len(s) > maxKeyPath {
		return strings.ToValidUTF8(s[:maxKeyPath], "") + "..."
	}
	return s
}

// keyPath names a place in nats.conf (jetstream.limits, users[0].name),
// the top level as "the top level".
func keyPath(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return bounded(b.String())
}
