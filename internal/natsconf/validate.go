package natsconf

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// minLameDuckDuration is nats-server's own lower bound; a shorter
// lame_duck_duration makes it refuse the whole file.
const minLameDuckDuration = 30 * time.Second

// reservedClusterName is refused by nats-server as a cluster name: it marks
// leaf node messages of no origin cluster.
const reservedClusterName = "_"

// validate checks the rules that span fields, or that nats-server enforces
// only when it loads the file. Rules about writing single values (quoting,
// env var names) are checked where those values are written.
func (c *Config) validate() error {
	checks := []func() error{
		c.validateServer,
		c.validateCluster,
		c.validateJetStream,
		c.validateListeners,
		c.validateAuthorization,
		c.validateAccounts,
		c.validateUsersUnique,
		c.validateEnvNotShadowed,
		c.validateExtraKeys,
		c.validateTrustAlone,
		c.validateTopology,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateServer checks the scalar top-level settings.
func (c *Config) validateServer() error {
	if err := validatePort("port", c.Port); err != nil {
		return err
	}
	if err := validatePort("http_port", c.HTTPPort); err != nil {
		return err
	}
	if err := validatePort("https_port", c.HTTPSPort); err != nil {
		return err
	}
	if c.AllowNonTLS && (c.TLS == nil || c.TLS.HandshakeFirst) {
		return errors.New("allow_non_tls needs client TLS without handshake_first (which refuses clients that do not start with TLS)")
	}
	if c.HTTPSPort != 0 && c.TLS == nil {
		return errors.New("https_port needs the client tls block: nats-server serves monitoring with its certificate")
	}
	if c.HTTPSPort != 0 && c.HTTPPort != 0 {
		return errors.New("set http_port or https_port, not both")
	}
	if err := validateTLS("client", c.TLS); err != nil {
		return err
	}
	if !c.ServerName.isEnv() && strings.Contains(c.ServerName.text, " ") {
		return fmt.Errorf("server_name %q contains a space, which nats-server refuses", c.ServerName.text)
	}
	if c.LameDuckDuration != 0 && c.LameDuckDuration < minLameDuckDuration {
		return fmt.Errorf("lame_duck_duration %s is below nats-server's minimum of %s", c.LameDuckDuration, minLameDuckDuration)
	}
	if c.LameDuckGracePeriod < 0 {
		return fmt.Errorf("lame_duck_grace_period %s is negative", c.LameDuckGracePeriod)
	}
	return nil
}

// validateCluster checks what parseCluster in nats-server would refuse.
func (c *Config) validateCluster() error {
	if c.Cluster == nil {
		return nil
	}
	if strings.Contains(c.Cluster.Name, " ") {
		return fmt.Errorf("cluster name %q contains a space, which nats-server refuses", c.Cluster.Name)
	}
	if c.Cluster.Name == reservedClusterName {
		return fmt.Errorf("cluster name %q is reserved by nats-server", c.Cluster.Name)
	}
	for i, route := range c.Cluster.Routes {
		if route == "" {
			return fmt.Errorf("cluster route %d is empty", i)
		}
	}
	if !c.Cluster.RouteURLs.IsZero() {
		if len(c.Cluster.Routes) > 0 {
			return errors.New("cluster routes come from a file list or an environment variable, not both")
		}
		if !c.Cluster.RouteURLs.isEnv() || !strings.HasSuffix(c.Cluster.RouteURLs.text, routeURLsSuffix) {
			return fmt.Errorf("cluster routes must be an environment variable whose name ends in %s", routeURLsSuffix)
		}
	}
	if a := c.Cluster.Authorization; a != nil && (a.User.IsZero() || a.Password.IsZero()) {
		return errors.New("cluster authorization needs a user and a password")
	}
	if err := validateTLS("cluster", c.Cluster.TLS); err != nil {
		return err
	}
	return validatePort("cluster port", c.Cluster.Port)
}

// validateJetStream refuses negative sizes: nats-server uses -1 internally
// for "unset", while the Config spells unset as zero, so a negative size can
// only be a mistake.
func (c *Config) validateJetStream() error {
	if c.JetStream == nil {
		return nil
	}
	if c.JetStream.MaxFileStore < 0 || c.JetStream.MaxMemoryStore < 0 {
		return errors.New("jetstream store sizes must not be negative")
	}
	return nil
}

// validateExtraKeys refuses keys off the passthrough allow-list, and keys
// that fold to the same one: nats-server lowercases top-level keys, so both
// would set one option and the winner would depend on map order.
func (c *Config) validateExtraKeys() error {
	seen := make(map[string]string, len(c.Extra))
	for _, key := range sortedKeys(c.Extra) {
		if !IsPassthroughKey(key) {
			return fmt.Errorf("extra key %q is not an allowed passthrough setting (allowed: %s)",
				key, strings.Join(PassthroughKeys(), ", "))
		}
		folded := FoldKey(key)
		if other, ok := seen[folded]; ok {
			return fmt.Errorf("extra keys %q and %q name the same nats-server setting", other, key)
		}
		seen[folded] = key
		if folded == "server_tags" && len(c.ServerTags) > 0 {
			return fmt.Errorf("extra key %q and the operator's ServerTags would both set server_tags", key)
		}
	}
	return nil
}

// validatePort accepts zero (omitted) and real TCP ports.
func validatePort(name string, port int) error {
	if port < 0 || port > 65535 {
		return fmt.Errorf("%s %d is out of range", name, port)
	}
	return nil
}

// validateTrustAlone: with an operator, nats-server ignores (or refuses)
// accounts and users of the file; the model never writes both.
func (c *Config) validateTrustAlone() error {
	if c.Trust != nil && (c.Authorization != nil || len(c.Accounts) > 0 || c.SystemAccount != "") {
		return errors.New("trust (auth mode jwt) excludes authorization, accounts and system_account")
	}
	return nil
}
