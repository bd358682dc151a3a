package natsconf

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// The operator's additions to a config beyond the server settings: a file
// the config includes (Config.Include) and the server metadata it sets
// (Config.Metadata). Both exist so that a config reload can be confirmed:
// the metadata is what the server reports, in /varz and in every system
// account reply, of the files it loaded last.

// writeInclude writes the include directive first, so that the variables
// the included file defines are known to every later reference.
func (c *Config) writeInclude(w *confWriter) error {
	for _, file := range append([]string{c.Include}, c.MoreIncludes...) {
		if file == "" {
			continue
		}
		// A relative path, below the file's own directory: nats-server reads it
		// from there, and the operator never names a file elsewhere.
		if path.IsAbs(file) || strings.HasPrefix(path.Clean(file), "..") {
			return fmt.Errorf("include %q: must be a path relative to the config file's directory", file)
		}
		quoted, err := quoteString(file)
		if err != nil {
			return fmt.Errorf("include: %w", err)
		}
		// A directive, not a key: no separator.
		w.line("include " + quoted)
	}
	return nil
}

// metadataKey is the passthrough key Metadata merges into, folded.
const metadataKey = "server_metadata"

// writeMetadata writes server_metadata: the user's entries (from Extra)
// with the operator's own on top. writeExtra then leaves the key out.
func (c *Config) writeMetadata(w *confWriter) error {
	if len(c.Metadata) == 0 {
		return nil
	}
	entries := map[string]string{}
	if key, user, ok := c.userMetadata(); ok {
		m, isMap := user.(map[string]any)
		if !isMap {
			return fmt.Errorf("extra %s: must be a map of strings", key)
		}
		for k, v := range m {
			s, isString := v.(string)
			if !isString {
				return fmt.Errorf("extra %s.%s: must be a string", key, k)
			}
			if err := c.reservedMetadataKey(k); err != nil {
				return fmt.Errorf("extra %s.%s: %w", key, k, err)
			}
			quoted, err := quoteString(s)
			if err != nil {
				return fmt.Errorf("extra %s.%s: %w", key, k, err)
			}
			entries[k] = quoted
		}
	}
	for k, v := range c.Metadata {
		formatted, err := v.format()
		if err != nil {
			return fmt.Errorf("server_metadata %s: %w", k, err)
		}
		entries[k] = formatted
	}
	w.openBlock(metadataKey)
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		formattedKey, err := formatKey(k)
		if err != nil {
			return fmt.Errorf("server_metadata %s: %w", k, err)
		}
		w.keyValue(formattedKey, entries[k])
	}
	w.closeBlock()
	return nil
}

// ReservedMetadataPrefix starts every server_metadata key kubenats may
// use, folded as FoldKey folds: its marks (kubenats.io/config, ...) and
// the variables they read (KUBENATS_USERS_REVISION, from users.conf).
const ReservedMetadataPrefix = "kubenats"

// reservedMetadataKey refuses a user's server_metadata key that could
// stand for one of the operator's. Its marks tell the operator which files
// a server loaded; a user key that shadows one makes a server report a
// mark of the user's choosing, and the operator believe it loaded
// passwords it did not (or reload it forever). Two ways to shadow: the
// mark's own key, and the name of a variable a mark reads, since
// nats-server resolves $NAME against the keys of the enclosing block
// before the included file's (TestMetadataKeysShadowVariables). Keys
// with the reserved prefix are refused whatever the operator writes
// today, so a new mark cannot be shadowed by a spec written before it.
func (c *Config) reservedMetadataKey(k string) error {
	if strings.HasPrefix(FoldKey(k), ReservedMetadataPrefix) {
		return fmt.Errorf("keys starting with %q (in any letter case) are kubenats' own", ReservedMetadataPrefix)
	}
	for ours, v := range c.Metadata {
		if k == ours {
			return errors.New("the key is kubenats' own")
		}
		if v.isEnv() && v.text == k {
			return fmt.Errorf("the key is the name of the variable kubenats' %s reads", ours)
		}
	}
	return nil
}

// userMetadata is the user's server_metadata passthrough entry, if any.
func (c *Config) userMetadata() (key string, value any, ok bool) {
	for k, v := range c.Extra {
		if FoldKey(k) == metadataKey {
			return k, v, true
		}
	}
	return "", nil, false
}

// extraWithoutMetadata is Extra less the entry writeMetadata merged.
func (c *Config) extraWithoutMetadata() map[string]any {
	if len(c.Metadata) == 0 {
		return c.Extra
	}
	key, _, ok := c.userMetadata()
	if !ok {
		return c.Extra
	}
	out := maps.Clone(c.Extra)
	delete(out, key)
	return out
}
