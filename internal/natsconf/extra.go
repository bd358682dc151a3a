package natsconf

import (
	"fmt"
	"maps"
	"slices"
)

// writeExtra writes the user's passthrough settings after the operator's own.
// Map keys are sorted at every level so the output does not depend on Go's
// map order; array order is the user's and is kept.
func (c *Config) writeExtra(w *confWriter) error {
	extra := c.extraWithoutMetadata()
	if len(extra) == 0 {
		return nil
	}
	w.comment("Passthrough settings from the resource spec.")
	return writeMapEntries(w, extra, "")
}

// writeMapEntries writes every entry of m as `key: value` or `key { ... }`.
// prefix locates m in error messages.
func writeMapEntries(w *confWriter, m map[string]any, prefix string) error {
	for _, key := range sortedKeys(m) {
		if err := writeEntry(w, key, m[key], prefix+key); err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes one keyed value of any supported type.
func writeEntry(w *confWriter, key string, value any, path string) error {
	formattedKey, err := formatKey(key)
	if err != nil {
		return fmt.Errorf("extra %s: %w", path, err)
	}
	switch v := value.(type) {
	case map[string]any:
		w.openBlock(formattedKey)
		if err := writeMapEntries(w, v, path+"."); err != nil {
			return err
		}
		w.closeBlock()
	case []any:
		if len(v) == 0 {
			w.keyValue(formattedKey, "[]")
			return nil
		}
		w.openArray(formattedKey)
		if err := writeArrayItems(w, v, path); err != nil {
			return err
		}
		w.closeArray()
	default:
		scalar, err := formatScalar(v)
		if err != nil {
			return fmt.Errorf("extra %s: %w", path, err)
		}
		w.keyValue(formattedKey, scalar)
	}
	return nil
}

// writeArrayItems writes array elements one per line. Maps and arrays inside
// arrays open on their own line, which the lexer accepts as an element.
func writeArrayItems(w *confWriter, items []any, path string) error {
	for i, item := range items {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		switch v := item.(type) {
		case map[string]any:
			w.openAnonymousBlock()
			if err := writeMapEntries(w, v, itemPath+"."); err != nil {
				return err
			}
			w.closeBlock()
		case []any:
			if len(v) == 0 {
				w.arrayItem("[]")
				continue
			}
			w.openAnonymousArray()
			if err := writeArrayItems(w, v, itemPath); err != nil {
				return err
			}
			w.closeArray()
		default:
			scalar, err := formatScalar(v)
			if err != nil {
				return fmt.Errorf("extra %s: %w", itemPath, err)
			}
			w.arrayItem(scalar)
		}
	}
	return nil
}

// formatScalar writes a leaf value. Strings are always quoted so that no
// user text is read as a number, boolean, variable or comment.
func formatScalar(value any) (string, error) {
	switch v := value.(type) {
	case string:
		return quoteString(v)
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case nil:
		return "", fmt.Errorf("null has no nats.conf form; remove the key instead")
	}
	if number, ok, err := formatNumber(value); ok {
		return number, err
	}
	return "", fmt.Errorf("unsupported value type %T", value)
}

// sortedKeys returns the keys of m in byte order.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
