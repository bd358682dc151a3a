package natsconf

import "fmt"

// writeAuthorization writes the top-level authorization block, which
// configures clients of the global account.
func (c *Config) writeAuthorization(w *confWriter) error {
	auth := c.Authorization
	if auth == nil {
		return nil
	}
	w.openBlock("authorization")
	if !auth.Token.IsZero() {
		token, err := auth.Token.format()
		if err != nil {
			return fmt.Errorf("authorization token: %w", err)
		}
		w.keyValue("token", token)
	}
	if err := writeUsers(w, auth.Users); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	w.closeBlock()
	return nil
}

// writeAccounts writes the accounts block and, after it, system_account.
func (c *Config) writeAccounts(w *confWriter) error {
	if len(c.Accounts) > 0 {
		w.openBlock("accounts")
		for _, acc := range c.Accounts {
			if err := writeAccount(w, acc); err != nil {
				return fmt.Errorf("account %q: %w", acc.Name, err)
			}
		}
		w.closeBlock()
	}
	if c.SystemAccount != "" {
		if err := writeString(w, "system_account", c.SystemAccount); err != nil {
			return err
		}
	}
	return nil
}

func writeAccount(w *confWriter, acc Account) error {
	key, err := formatKey(acc.Name)
	if err != nil {
		return err
	}
	w.openBlock(key)
	if acc.JetStream {
		w.keyValue("jetstream", "enabled")
	}
	if err := writeUsers(w, acc.Users); err != nil {
		return err
	}
	w.closeBlock()
	return nil
}

// writeUsers writes a users array, one block per user.
func writeUsers(w *confWriter, users []User) error {
	if len(users) == 0 {
		return nil
	}
	w.openArray("users")
	for _, u := range users {
		name, err := u.User.format()
		if err != nil {
			return fmt.Errorf("user: %w", err)
		}
		password, err := u.Password.format()
		if err != nil {
			return fmt.Errorf("user %s password: %w", describe(u.User), err)
		}
		w.openAnonymousBlock()
		w.keyValue("user", name)
		w.keyValue("password", password)
		w.closeBlock()
	}
	w.closeArray()
	return nil
}
