package natsconf

import (
	"fmt"
	"strings"
)

// Leafnodes is the leafnodes block: the listener leafnodes connect to
// (Port, Authorization, TLS) and the remotes this server dials.
type Leafnodes struct {
	// Port of the leafnode listener; zero opens none (remotes only).
	Port int
	// Authorization is the one user every accepted leafnode presents, and
	// the account it joins. Nil: the server's own authentication decides
	// (decentralized: the user's JWT).
	Authorization *LeafAuthorization
	// TLS secures the listener.
	TLS *TLS
	// Remotes are dialed in this order.
	Remotes []LeafRemote
}

// LeafAuthorization is the leafnode listener's single user.
type LeafAuthorization struct {
	User     Value
	Password Value
	// Account the leafnodes join; it must be one of Config.Accounts.
	Account string
}

// LeafRemote is one hub a server dials.
type LeafRemote struct {
	// URLs are literals, or references to variables (a URL that carries a
	// password is a variable of an included file, never in the text).
	URLs []Value
	// Account is the local account the remote binds to.
	Account string
	// Credentials is the path of a .creds file.
	Credentials string
	// TLS verifies the hub against CAFile; CertFile and KeyFile, when set,
	// are presented to it.
	TLS *TLS
	// DenyImports and DenyExports are subjects kept from crossing.
	DenyImports []string
	DenyExports []string
}

// Gateway is the gateway block that joins a cluster to a supercluster.
type Gateway struct {
	// Name is this cluster's gateway name; nats-server requires it to be
	// the cluster block's name too.
	Name string
	Port int
	// Advertise is the address other gateways learn for this server.
	Advertise Value
	// Authorization is what every gateway must present.
	Authorization *RouteAuthorization
	// TLS secures every gateway connection, both ways.
	TLS *TLS
	// Gateways are the other members.
	Gateways []GatewayRemote
}

// GatewayRemote is another member: its name and the environment variable
// (ending in _URLS) that holds its URLs with the gateway credentials.
type GatewayRemote struct {
	Name string
	URLs Value
}

func (c *Config) writeLeafnodes(w *confWriter) error {
	l := c.Leafnodes
	if l == nil {
		return nil
	}
	w.openBlock("leafnodes")
	writePort(w, "port", l.Port)
	if a := l.Authorization; a != nil {
		w.openBlock("authorization")
		if err := writeValues(w, "leafnodes authorization", map[string]Value{"user": a.User, "password": a.Password}); err != nil {
			return err
		}
		if a.Account != "" {
			if err := writeString(w, "account", a.Account); err != nil {
				return fmt.Errorf("leafnodes authorization: %w", err)
			}
		}
		w.closeBlock()
	}
	if err := writeTLS(w, l.TLS); err != nil {
		return fmt.Errorf("leafnodes: %w", err)
	}
	if len(l.Remotes) > 0 {
		w.openArray("remotes")
		for i, r := range l.Remotes {
			if err := writeRemote(w, r); err != nil {
				return fmt.Errorf("leafnodes remote %d: %w", i, err)
			}
		}
		w.closeArray()
	}
	w.closeBlock()
	return nil
}

func writeRemote(w *confWriter, r LeafRemote) error {
	w.openAnonymousBlock()
	w.openArray("urls")
	for _, u := range r.URLs {
		v, err := u.format()
		if err != nil {
			return fmt.Errorf("url: %w", err)
		}
		w.arrayItem(v)
	}
	w.closeArray()
	if r.Account != "" {
		if err := writeString(w, "account", r.Account); err != nil {
			return err
		}
	}
	if r.Credentials != "" {
		if err := writeString(w, "credentials", r.Credentials); err != nil {
			return err
		}
	}
	if err := writeTLS(w, r.TLS); err != nil {
		return err
	}
	for _, deny := range []struct {
		key      string
		subjects []string
	}{{"deny_imports", r.DenyImports}, {"deny_exports", r.DenyExports}} {
		if len(deny.subjects) == 0 {
			continue
		}
		w.openArray(deny.key)
		for _, s := range deny.subjects {
			q, err := quoteString(s)
			if err != nil {
				return fmt.Errorf("%s: %w", deny.key, err)
			}
			w.arrayItem(q)
		}
		w.closeArray()
	}
	w.closeBlock()
	return nil
}

func (c *Config) writeGateway(w *confWriter) error {
	g := c.Gateway
	if g == nil {
		return nil
	}
	w.openBlock("gateway")
	if err := writeString(w, "name", g.Name); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	writePort(w, "port", g.Port)
	if !g.Advertise.IsZero() {
		v, err := g.Advertise.format()
		if err != nil {
			return fmt.Errorf("gateway advertise: %w", err)
		}
		w.keyValue("advertise", v)
	}
	if a := g.Authorization; a != nil {
		w.openBlock("authorization")
		if err := writeValues(w, "gateway authorization", map[string]Value{"user": a.User, "password": a.Password}); err != nil {
			return err
		}
		w.closeBlock()
	}
	if err := writeTLS(w, g.TLS); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if len(g.Gateways) > 0 {
		w.openArray("gateways")
		for _, r := range g.Gateways {
			w.openAnonymousBlock()
			if err := writeString(w, "name", r.Name); err != nil {
				return fmt.Errorf("gateway %s: %w", r.Name, err)
			}
			v, err := r.URLs.format()
			if err != nil {
				return fmt.Errorf("gateway %s urls: %w", r.Name, err)
			}
			w.keyValue("urls", v)
			w.closeBlock()
		}
		w.closeArray()
	}
	w.closeBlock()
	return nil
}

// writeValues writes user then password, in that order.
func writeValues(w *confWriter, where string, vals map[string]Value) error {
	for _, k := range []string{"user", "password"} {
		v, err := vals[k].format()
		if err != nil {
			return fmt.Errorf("%s %s: %w", where, k, err)
		}
		w.keyValue(k, v)
	}
	return nil
}

// validateTopology checks what nats-server refuses of the leafnodes and
// gateway blocks at start.
func (c *Config) validateTopology() error {
	if l := c.Leafnodes; l != nil {
		if err := validateTLS("leafnodes", l.TLS); err != nil {
			return err
		}
		if l.Authorization != nil && l.Authorization.Account != "" && !c.hasAccount(l.Authorization.Account) {
			return fmt.Errorf("leafnodes authorization: account %q is not defined", l.Authorization.Account)
		}
		for i, r := range l.Remotes {
			if len(r.URLs) == 0 {
				return fmt.Errorf("leafnodes remote %d: no URL", i)
			}
			if t := r.TLS; t != nil && (t.CertFile == "") != (t.KeyFile == "") {
				return fmt.Errorf("leafnodes remote %d tls: cert_file and key_file go together", i)
			}
			if r.Account != "" && c.Trust == nil && !c.hasAccount(r.Account) {
				return fmt.Errorf("leafnodes remote %d: account %q is not defined", i, r.Account)
			}
		}
	}
	if g := c.Gateway; g != nil {
		if g.Name == "" || strings.ContainsAny(g.Name, " \t") {
			return fmt.Errorf("gateway: a name without spaces is required")
		}
		if c.Cluster != nil && c.Cluster.Name != g.Name {
			return fmt.Errorf("gateway name %q must be the cluster name %q", g.Name, c.Cluster.Name)
		}
		if c.JetStream != nil && c.Cluster == nil {
			// nats-server 2.15 refuses to start: "JetStream cluster
			// requires configured routes".
			return fmt.Errorf("gateway: JetStream in a supercluster needs a cluster of servers (routes); a single server cannot run it")
		}
		if err := validateTLS("gateway", g.TLS); err != nil {
			return err
		}
		for _, r := range g.Gateways {
			if !r.URLs.isEnv() || !strings.HasSuffix(r.URLs.text, routeURLsSuffix) {
				return fmt.Errorf("gateway %s: urls must be an environment variable ending in %s", r.Name, routeURLsSuffix)
			}
		}
	}
	return nil
}

// hasAccount reports whether name is one of Accounts. A config without
// accounts is not checked: it is the operator's restart-hash view, which
// leaves the accounts out (renderConf), never a file a server loads.
func (c *Config) hasAccount(name string) bool {
	if len(c.Accounts) == 0 {
		return true
	}
	for _, a := range c.Accounts {
		if a.Name == name {
			return true
		}
	}
	return false
}

// withoutTopologyFiles takes the leafnodes and gateway blocks out for the
// check, as the tls blocks are: they name files that exist only in the pod
// (certificates, creds), the check refuses every key that reads a file,
// and they are the operator's own, validated by validateTopology.
func (c *Config) withoutTopologyFiles(out *Config) {
	out.Leafnodes, out.Gateway = nil, nil
}
