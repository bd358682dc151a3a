package natsconf

import (
	"errors"
	"fmt"
)

// globalAccountName is the account nats-server reserves for clients without
// an account ($G); declaring it in the accounts block is an error.
const globalAccountName = "$G"

// validateAuthorization enforces the shape nats-server accepts for the
// top-level authorization block, and keeps secrets out of the file.
func (c *Config) validateAuthorization() error {
	auth := c.Authorization
	if auth == nil {
		return nil
	}
	hasToken, hasUsers := !auth.Token.IsZero(), len(auth.Users) > 0
	switch {
	case hasToken && hasUsers:
		return errors.New("authorization: set either a token or users, not both")
	case !hasToken && !hasUsers:
		return errors.New("authorization: set a token or users")
	case hasToken && !auth.Token.isEnv():
		return errors.New("authorization: the token must be an environment variable reference, secrets never appear in nats.conf")
	case hasToken && c.accountsHaveUsers():
		// nats-server refuses it: "Can not have a token and accounts".
		return errors.New("authorization: a token cannot be combined with account users")
	}
	return validateUsers("authorization", auth.Users)
}

// validateAccounts refuses account names nats-server would reject or merge.
func (c *Config) validateAccounts() error {
	seen := make(map[string]bool, len(c.Accounts))
	for _, acc := range c.Accounts {
		switch {
		case acc.Name == "":
			return errors.New("account with an empty name")
		case acc.Name == globalAccountName:
			return fmt.Errorf("account name %q is reserved by nats-server", acc.Name)
		case seen[acc.Name]:
			return fmt.Errorf("account %q is declared twice", acc.Name)
		}
		seen[acc.Name] = true
		if err := validateUsers("account "+acc.Name, acc.Users); err != nil {
			return err
		}
	}
	return nil
}

// validateUsersUnique mirrors nats-server's "Duplicate user" check across the
// authorization block and all accounts. Two users naming the same
// environment variable are the same user too.
func (c *Config) validateUsersUnique() error {
	seen := map[Value]bool{}
	for _, u := range c.allUsers() {
		if seen[u.User] {
			return fmt.Errorf("user %s is declared twice", describe(u.User))
		}
		seen[u.User] = true
	}
	return nil
}

// validateEnvNotShadowed refuses an environment variable that has the name of
// an account. nats-server resolves $NAME against the keys of enclosing blocks
// before the environment, so inside the accounts block $APP would be the APP
// account's settings, not the variable.
func (c *Config) validateEnvNotShadowed() error {
	for _, acc := range c.Accounts {
		for _, u := range c.allUsers() {
			for _, v := range []Value{u.User, u.Password} {
				if v.isEnv() && v.text == acc.Name {
					return fmt.Errorf("environment variable $%s has the name of an account, nats-server would read the account instead", v.text)
				}
			}
		}
	}
	return nil
}

// validateUsers checks each user has a name and an environment password.
func validateUsers(where string, users []User) error {
	for i, u := range users {
		if u.User.IsZero() {
			return fmt.Errorf("%s: user %d has no name", where, i)
		}
		if !u.Password.isEnv() {
			return fmt.Errorf("%s: user %s: the password must be an environment variable reference, secrets never appear in nats.conf", where, describe(u.User))
		}
	}
	return nil
}

// accountsHaveUsers reports whether any account lets users connect.
func (c *Config) accountsHaveUsers() bool {
	for _, acc := range c.Accounts {
		if len(acc.Users) > 0 {
			return true
		}
	}
	return false
}

// allUsers lists global users, then account users in account order.
func (c *Config) allUsers() []User {
	var users []User
	if c.Authorization != nil {
		users = append(users, c.Authorization.Users...)
	}
	for _, acc := range c.Accounts {
		users = append(users, acc.Users...)
	}
	return users
}

// describe names a Value in an error message. Only user names are described,
// and those are not secret.
func describe(v Value) string {
	if v.isEnv() {
		return "$" + v.text
	}
	return fmt.Sprintf("%q", v.text)
}
