package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// Environment variables the nats container gets. nats.conf refers to them
// as $NAME so that no secret value is ever written into the ConfigMap.
const (
	EnvPodName        = "POD_NAME"
	EnvServerName     = "SERVER_NAME"
	EnvPassword       = "NATS_PASSWORD"
	EnvToken          = "NATS_TOKEN"
	EnvSystemPassword = "NATS_SYSTEM_PASSWORD"
	// The route credentials and the route list that carries them: only in
	// the routes Secret, never in the ConfigMap.
	EnvRoutePassword = "NATS_ROUTE_PASSWORD"
	EnvRouteURLs     = "NATS_ROUTE_URLS"
	// EnvRouteAdvertise is this server's route address by DNS name.
	EnvRouteAdvertise = "NATS_ROUTE_ADVERTISE"
)

// Account and user names in mode users.
const (
	AppAccount    = v1alpha1.AppAccount
	SystemAccount = "SYS"
	// SystemUser is the operator's own user in the system account.
	SystemUser = "kubenats-system"
	// RouteUser is the one user every route authenticates as.
	RouteUser = "kubenats-route"
)

// Lame duck: the server stops accepting, then spreads its clients' reconnects
// over LameDuckDuration after a LameDuckGracePeriod.
const (
	LameDuckDuration    = 30 * time.Second
	LameDuckGracePeriod = 10 * time.Second
)

// NatsConf is the nats.conf model of c.
func NatsConf(c *v1alpha1.NatsCluster) (*natsconf.Config, error) { return natsConfWith(c, Inputs{}) }

// natsConfWith is NatsConf with what the controller read or decided: the
// trust Secret's values (mode jwt), whether replicas spread over zones.
func natsConfWith(c *v1alpha1.NatsCluster, in Inputs) (*natsconf.Config, error) {
	trust := in.Trust
	extra, err := decodeExtra(c.Spec.Config)
	if err != nil {
		return nil, err
	}
	conf := &natsconf.Config{
		ServerName:          natsconf.Env(EnvServerName),
		Port:                ClientPort,
		TLS:                 clientTLS(c),
		AllowNonTLS:         c.Spec.AcceptsPlaintextClients(),
		PidFile:             PidFile,
		LameDuckDuration:    LameDuckDuration,
		LameDuckGracePeriod: LameDuckGracePeriod,
		Cluster:             clusterBlock(c),
		ServerTags:          serverTags(c),
		JetStream:           jetStreamBlock(c, in.SpreadZones),
		WebSocket:           webSocketBlock(c),
		MQTT:                mqttBlock(c),
		Leafnodes:           leafnodesBlock(c),
		Gateway:             gatewayBlock(c),
		Extra:               extra,
	}
	if c.HasLeafnodesFile() {
		conf.MoreIncludes = []string{LeafnodesConfKey}
	}
	if c.HasUsersFile() {
		conf.Include = UsersConfKey
	}
	if c.Spec.MonitorTLSEnabled() {
		conf.HTTPSPort = MonitorPort
	} else {
		conf.HTTPPort = MonitorPort
	}
	switch c.Spec.Auth.Mode {
	case v1alpha1.AuthToken:
		conf.Authorization = &natsconf.Authorization{Token: natsconf.Env(EnvToken)}
	case v1alpha1.AuthNone:
	case v1alpha1.AuthJWT:
		// No accounts block: every account is a JWT the servers' resolver
		// holds, the system account too.
		if conf.Trust = trustConf(trust); conf.Trust == nil {
			return nil, errNoTrust
		}
		if conf.JetStream == nil {
			return nil, errors.New("auth.mode jwt keeps the account JWTs on the JetStream volume: it needs JetStream enabled")
		}
	default: // users
		// The application account carries JetStream; the system account is the
		// operator's, for health and JetStream peer management.
		conf.Accounts = []natsconf.Account{
			{Name: AppAccount, JetStream: c.Spec.JetStreamEnabled(), Users: []natsconf.User{
				{User: natsconf.String(c.Spec.Auth.AppUser()), Password: natsconf.Env(EnvPassword)},
			}},
			{Name: SystemAccount, Users: []natsconf.User{
				{User: natsconf.String(SystemUser), Password: natsconf.Env(EnvSystemPassword)},
			}},
		}
		conf.SystemAccount = SystemAccount
	}
	return conf, nil
}

// clusterBlock routes every server to every other through the headless
// Service. Routes are closed to strangers: every route authenticates with
// the route password and, unless route TLS is off, with a certificate from
// the cluster's CA. A single server has no cluster block.
func clusterBlock(c *v1alpha1.NatsCluster) *natsconf.Cluster {
	if c.Spec.ReplicaCount() < 2 {
		return nil
	}
	if RouteMode(c) == RoutesOpen {
		// A takeover's first step: the chart's servers route to these and
		// these to them, with nothing asked of either.
		return &natsconf.Cluster{Name: c.GatewayName(), Port: ClusterPort, NoAdvertise: true,
			Routes: openRoutes(c), Advertise: natsconf.Env(EnvRouteAdvertise)}
	}
	return &natsconf.Cluster{
		Name: c.GatewayName(), Port: ClusterPort, NoAdvertise: true,
		// The route URLs carry the route password, so they come from the
		// routes Secret through the environment.
		RouteURLs: natsconf.Env(EnvRouteURLs),
		// Gossiped routes dial what a server advertises: its DNS name, which
		// its certificate carries, not its IP address, which it does not.
		Advertise:     natsconf.Env(EnvRouteAdvertise),
		Authorization: &natsconf.RouteAuthorization{User: natsconf.String(RouteUser), Password: natsconf.Env(EnvRoutePassword)},
		TLS:           routeTLS(c),
	}
}

// RouteURLs is the value of the routes Secret's urls key: one route to
// every server, with the route credentials, as a nats.conf array. The short
// form <pod>.<headless> resolves through the pod's DNS search path, and the
// route certificate carries it.
func RouteURLs(c *v1alpha1.NatsCluster, password string) string {
	n := int(c.Spec.ReplicaCount())
	routes := make([]string, n)
	for i := range routes {
		u := url.URL{Scheme: "nats", User: url.UserPassword(RouteUser, password),
			Host: fmt.Sprintf("%s.%s:%d", c.PodName(i), c.HeadlessServiceName(), ClusterPort)}
		routes[i] = strconv.Quote(u.String())
	}
	return "[" + strings.Join(routes, ", ") + "]"
}

// routeAdvertise is EnvRouteAdvertise's value, quoted so that nats-server
// reads it as a string (the kubelet expands $(POD_NAME)).
func routeAdvertise(c *v1alpha1.NatsCluster) string {
	return fmt.Sprintf(`"$(%s).%s:%d"`, EnvPodName, c.HeadlessServiceName(), ClusterPort)
}

func jetStreamBlock(c *v1alpha1.NatsCluster, spreadZones bool) *natsconf.JetStream {
	if !c.Spec.JetStreamEnabled() {
		return nil
	}
	js := &natsconf.JetStream{StoreDir: StoreDir, Domain: c.Spec.JetStream.Domain}
	if s := c.Spec.JetStream.FileStore.Size; s != nil {
		js.MaxFileStore = FileStoreLimit(s.Value())
	}
	if m := c.Spec.JetStream.MemoryStore; m != nil {
		js.MaxMemoryStore = m.Size.Value()
	}
	if spreadZones && c.Spec.SpreadsZones() {
		js.UniqueTag = v1alpha1.ZoneTagPrefix
	}
	return js
}

// decodeExtra turns spec.config into plain values, numbers kept exact.
func decodeExtra(in map[string]apiextensionsv1.JSON) (map[string]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(in))
	for k, raw := range in {
		// UseNumber: float64 would round integers above 2^53.
		dec := json.NewDecoder(bytes.NewReader(raw.Raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("config.%s: %w", k, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("config.%s: unexpected data after the value", k)
		}
		out[k] = v
	}
	return out, nil
}

// RenderedConf is nats.conf as text, with the hash of its restart-relevant
// part and the revision it carries in the server metadata.
type RenderedConf struct {
	Text        string
	RestartHash string
	// Revision names the text (MetadataConfigKey): a server that reports
	// it loaded this nats.conf.
	Revision string
}

// Conf is c's nats.conf, as the ConfigMap carries it.
func Conf(c *v1alpha1.NatsCluster) (RenderedConf, error) {
	return renderConf(c.WithDefaults(), Inputs{})
}

// ConfWith is Conf with what the controller read or decided (Inputs.Trust
// in mode jwt, Inputs.SpreadZones), as Objects renders it.
func ConfWith(c *v1alpha1.NatsCluster, in Inputs) (RenderedConf, error) {
	return renderConf(c.WithDefaults(), in)
}

// MarkedNatsConf is the model of nats.conf exactly as the ConfigMap carries
// it: NatsConf with the reload marks in its server metadata, and the
// revision it marks. Its Render is Conf's Text.
func MarkedNatsConf(c *v1alpha1.NatsCluster) (*natsconf.Config, string, error) {
	return markedNatsConf(c, Inputs{})
}

func markedNatsConf(c *v1alpha1.NatsCluster, in Inputs) (*natsconf.Config, string, error) {
	trust := in.Trust
	conf, err := natsConfWith(c, in)
	if err != nil {
		return nil, "", err
	}
	conf.Metadata = map[string]natsconf.Value{MetadataConfigKey: natsconf.String("")}
	if c.HasUsersFile() {
		conf.Metadata[MetadataUsersKey] = natsconf.Env(EnvUsersRevision)
	}
	if c.HasLeafnodesFile() {
		conf.Metadata[MetadataLeafnodesKey] = natsconf.Env(EnvLeafnodesRevision)
	}
	if mark := OperatorKeysMark(trust); mark != "" {
		conf.Metadata[MetadataOperatorKeysKey] = natsconf.String(mark)
	}
	unmarked, err := conf.Render()
	if err != nil {
		return nil, "", fmt.Errorf("nats.conf: %w", err)
	}
	unmarkedSum := sha256.Sum256(unmarked)
	revision := hex.EncodeToString(unmarkedSum[:8])
	conf.Metadata[MetadataConfigKey] = natsconf.String(revision)
	return conf, revision, nil
}

// renderConf writes nats.conf and hashes what a reload cannot apply: the
// routes, the users and reloadable passthrough keys are left out of the hash,
// so changing them reloads the servers instead of restarting them. Only a
// cluster with a system user can be reloaded (the operator sends the reload
// through it): without one, every change restarts the servers.
//
// The text carries its own revision in the server metadata, a hash of the
// text without it; the users.conf revision comes from that file.
func renderConf(c *v1alpha1.NatsCluster, in Inputs) (RenderedConf, error) {
	conf, revision, err := markedNatsConf(c, in)
	if err != nil {
		return RenderedConf{}, err
	}
	text, err := conf.Render()
	if err != nil {
		return RenderedConf{}, fmt.Errorf("nats.conf: %w", err)
	}
	// A passthrough typo would stop every server at start: refuse it here,
	// for the operator and `kubenats render` alike.
	if err := conf.Check(); err != nil {
		return RenderedConf{}, err
	}
	restart := *conf
	// The trust block stays in: nats-server cannot reload a change of
	// operator.
	restart.Authorization, restart.Accounts, restart.SystemAccount, restart.Metadata = nil, nil, "", nil
	if c.HasSystemUser() {
		restart.MQTT = withoutReloadableMQTT(conf.MQTT)
	}
	if l := conf.Leafnodes; l != nil && c.HasSystemUser() {
		// Remotes reload (nats-server 2.14+); the listener does not.
		listener := *l
		listener.Remotes = nil
		restart.Leafnodes = &listener
	}
	restart.Extra = map[string]any{}
	for k, v := range conf.Extra {
		if !natsconf.Reloadable(k) || !c.HasSystemUser() {
			restart.Extra[k] = v
		}
	}
	restartText, err := restart.Render()
	if err != nil {
		return RenderedConf{}, err
	}
	sum := sha256.Sum256(restartText)
	return RenderedConf{Text: string(text), RestartHash: hex.EncodeToString(sum[:8]), Revision: revision}, nil
}
