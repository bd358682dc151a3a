package natsconf

import "time"

// Config is the operator's view of one nats-server's nats.conf. Zero fields
// are omitted from the output so that nats-server's own defaults apply.
type Config struct {
	// ServerName is the server's name, usually Env("SERVER_NAME") so that
	// every pod of a StatefulSet shares one file. Written as server_name.
	ServerName Value
	// ServerTags are the server's JetStream placement tags, each a Value
	// (an Env value's text must read as a string: a quoted word).
	ServerTags []Value
	// Port is the client port (nats-server's default is 4222).
	Port int
	// HTTPPort is the monitoring port (conventionally 8222).
	HTTPPort int
	// HTTPSPort is the monitoring port served over TLS instead; nats-server
	// serves it with the client listener's certificate (TLS), so it needs one.
	HTTPSPort int
	// TLS secures the client listener (and the https monitoring port).
	TLS *TLS
	// AllowNonTLS has the client listener accept clients that do not speak
	// TLS beside those that do (allow_non_tls); it needs TLS. nats-server
	// cannot reload it: changing it restarts the server.
	AllowNonTLS bool
	// PidFile is where nats-server writes its pid, so that the preStop
	// hook (nats-server --signal ldm=<pid file>) can find it.
	PidFile string
	// LameDuckDuration is how long the server spends draining clients on
	// shutdown. nats-server refuses values under 30s.
	LameDuckDuration time.Duration
	// LameDuckGracePeriod is the delay before lame duck mode starts closing
	// clients.
	LameDuckGracePeriod time.Duration
	// Cluster configures routes between servers; nil writes no cluster block.
	Cluster *Cluster
	// JetStream enables JetStream; nil leaves it off.
	JetStream *JetStream
	// WebSocket and MQTT are the listeners of those protocols; nil writes
	// none (listeners.go).
	WebSocket *WebSocket
	MQTT      *MQTT
	// Authorization configures clients of the global account: either a token
	// or a list of users. Nil writes no authorization block.
	Authorization *Authorization
	// Accounts are written in this order.
	Accounts []Account
	// SystemAccount names the system account, usually one of Accounts.
	SystemAccount string
	// Trust is decentralized authentication; it excludes Authorization,
	// Accounts and SystemAccount (its own system account is a public key).
	Trust *Trust
	// Include is a file nats.conf includes first, relative to its own
	// directory: the operator's users.conf, which defines the passwords as
	// variables, so that a rotated password reaches a running server by
	// reload (an environment variable never changes). The config check
	// leaves it out: it never opens a file.
	Include string
	// Metadata are the operator's own server_metadata entries, merged with
	// the user's (Extra's server_metadata, whose keys must differ). They
	// mark what a server loaded: nats-server reports them in /varz and in
	// every system account reply.
	Metadata map[string]Value
	// Leafnodes and Gateway are the topology listeners (topology.go).
	Leafnodes *Leafnodes
	Gateway   *Gateway
	// MoreIncludes are further files nats.conf includes after Include,
	// under the same rule (relative paths): the leafnode remotes'
	// credentials, which a reload rereads.
	MoreIncludes []string
	// Extra holds the user's passthrough settings, as decoded from JSON:
	// map[string]any, []any, string, float64, json.Number, int64, int, bool.
	// Keys are written after the operator's own, sorted at every level. A
	// top-level key that PassthroughKeys does not list (folded by FoldKey) is
	// an error.
	Extra map[string]any
}

// Cluster is the cluster block that connects servers with routes.
type Cluster struct {
	// Name is the cluster name; nats-server refuses names with spaces.
	Name string
	// Port is the route port (conventionally 6222).
	Port int
	// NoAdvertise stops the server from gossiping its routes to clients,
	// which would hand them pod addresses they may not be able to reach.
	NoAdvertise bool
	// Routes are route URLs such as nats://nats-0.nats:6222, in this order.
	Routes []string
	// RouteURLs names an environment variable that holds the routes as a
	// nats.conf array instead, for routes that carry credentials: the
	// credentials then never appear in the file. The name must end in
	// _URLS, which tells the config check to stand in an empty array.
	RouteURLs Value
	// Advertise is the address other servers learn for this one through
	// gossip. A DNS name keeps TLS verification working for implicit routes,
	// which would otherwise dial the peer's IP address.
	Advertise Value
	// Authorization is what every route must present.
	Authorization *RouteAuthorization
	// TLS secures the routes; with Verify it is mutual.
	TLS *TLS
}

// RouteAuthorization is the one user every route authenticates as.
type RouteAuthorization struct {
	User     Value
	Password Value
}

// JetStream is the jetstream block. Zero sizes are omitted, which lets
// nats-server size the stores from the machine it runs on.
type JetStream struct {
	// StoreDir is the storage directory, normally on a persistent volume.
	StoreDir string
	// MaxFileStore caps file storage in bytes.
	MaxFileStore int64
	// MaxMemoryStore caps memory storage in bytes.
	MaxMemoryStore int64
	// Domain is the JetStream domain, for leaf node setups.
	Domain string
	// UniqueTag is the tag prefix whose values a stream's replicas must
	// not share (unique_tag); "" places replicas anywhere.
	UniqueTag string
}

// Authorization is the top-level authorization block for the global account.
// Exactly one of Token and Users must be set.
type Authorization struct {
	// Token is the shared client token. It must be an Env value.
	Token Value
	// Users are username/password pairs in the global account.
	Users []User
}

// User is one username/password pair. Password must be an Env value; User
// may be a literal or an Env value.
type User struct {
	User     Value
	Password Value
}

// Account is one entry in the accounts block.
type Account struct {
	// Name is the account name, written as the block key.
	Name string
	// JetStream enables JetStream for the account with no account limits.
	JetStream bool
	// Users can connect to this account.
	Users []User
}
