package natsconf

import (
	"maps"
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// equal fails the test when got != want.
func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// userEntry is what nats-server loaded for one user.
type userEntry struct {
	password string
	account  string // "" for the global account
}

// loadedUsers indexes opts.Users by user name.
func loadedUsers(opts *server.Options) map[string]userEntry {
	users := make(map[string]userEntry, len(opts.Users))
	for _, u := range opts.Users {
		entry := userEntry{password: u.Password}
		if u.Account != nil {
			entry.account = u.Account.Name
		}
		users[u.Username] = entry
	}
	return users
}

// expectUsers checks the loaded users exactly.
func expectUsers(t *testing.T, opts *server.Options, want map[string]userEntry) {
	t.Helper()
	got := loadedUsers(opts)
	if !maps.Equal(got, want) {
		t.Errorf("users = %+v, want %+v", got, want)
	}
}

// accountNames lists the loaded accounts in order.
func accountNames(opts *server.Options) []string {
	names := make([]string, 0, len(opts.Accounts))
	for _, acc := range opts.Accounts {
		names = append(names, acc.Name)
	}
	return names
}

// expectAccounts checks the loaded account names, ignoring order (nats-server
// reads the accounts block as a map).
func expectAccounts(t *testing.T, opts *server.Options, want ...string) {
	t.Helper()
	got := accountNames(opts)
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("accounts = %v, want %v", got, want)
	}
}

// routeStrings lists the loaded route URLs in order.
func routeStrings(opts *server.Options) []string {
	routes := make([]string, 0, len(opts.Routes))
	for _, u := range opts.Routes {
		routes = append(routes, u.String())
	}
	return routes
}
