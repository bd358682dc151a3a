package natsconf

import (
	"errors"
	"fmt"
	"strings"
)

// checkUsers checks what nats-server checks across the authorization and
// accounts blocks (processConfigFileLine's authorization case and
// parseAccounts): a user name is declared once over all of them, and a
// token goes with no users at all. The blocks' own shapes were checked by
// their rules.
func checkUsers(parsed map[string]any) error {
	token := false
	var names []string
	for _, k := range sortedKeys(parsed) {
		switch strings.ToLower(k) {
		case "authorization":
			auth := parsed[k].(map[string]any)
			for _, ak := range sortedKeys(auth) {
				switch strings.ToLower(ak) {
				case "token":
					token = true
				case "users":
					names = append(names, userNames(auth[ak])...)
				}
			}
		case "accounts":
			accts := parsed[k].(map[string]any)
			for _, name := range sortedKeys(accts) {
				acc := accts[name].(map[string]any)
				for _, ak := range sortedKeys(acc) {
					if strings.ToLower(ak) == "users" {
						names = append(names, userNames(acc[ak])...)
					}
				}
			}
		}
	}
	if token && len(names) > 0 {
		return errors.New("a token cannot be combined with users, in the authorization block or in accounts")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("user %q is declared twice", n)
		}
		seen[n] = true
	}
	return nil
}

// userNames are the names of a users array the users rule accepted.
func userNames(v any) []string {
	var out []string
	for _, u := range v.([]any) {
		out = append(out, userName(u.(map[string]any)))
	}
	return out
}

// userName is a user block's name ("" if it has none).
func userName(u map[string]any) string {
	for _, k := range sortedKeys(u) {
		if strings.ToLower(k) == "user" {
			name, _ := u[k].(string)
			return name
		}
	}
	return ""
}
