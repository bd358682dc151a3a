package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
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
)

// Account and user names in mode users.
const (
	AppAccount    = "APP"
	SystemAccount = "SYS"
	// SystemUser is the operator's own user in the system account.
	SystemUser = "kubenats-system"
)

// Lame duck: the server stops accepting, then spreads its clients' reconnects
// over LameDuckDuration after a LameDuckGracePeriod.
const (
	LameDuckDuration    = 30 * time.Second
	LameDuckGracePeriod = 10 * time.Second
)

// NatsConf is the nats.conf model of c.
func NatsConf(c *v1alpha1.NatsCluster) (*natsconf.Config, error) {
	extra, err := decodeExtra(c.Spec.Config)
	if err != nil {
		return nil, err
	}
	conf := &natsconf.Config{
		ServerName:          natsconf.Env(EnvServerName),
		Port:                ClientPort,
		HTTPPort:            MonitorPort,
		PidFile:             PidFile,
		LameDuckDuration:    LameDuckDuration,
		LameDuckGracePeriod: LameDuckGracePeriod,
		Cluster:             clusterBlock(c),
		JetStream:           jetStreamBlock(c),
		Extra:               extra,
	}
	switch c.Spec.Auth.Mode {
	case v1alpha1.AuthToken:
		conf.Authorization = &natsconf.Authorization{Token: natsconf.Env(EnvToken)}
	case v1alpha1.AuthNone:
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
// Service. A single server has no cluster block.
func clusterBlock(c *v1alpha1.NatsCluster) *natsconf.Cluster {
	n := int(c.Spec.ReplicaCount())
	if n < 2 {
		return nil
	}
	routes := make([]string, n)
	for i := range routes {
		// The short form <pod>.<headless> resolves through the pod's DNS search
		// path; a TLS route certificate must carry the same form in its SANs.
		routes[i] = fmt.Sprintf("nats://%s.%s:%d", PodName(c, i), HeadlessServiceName(c), ClusterPort)
	}
	return &natsconf.Cluster{Name: c.Name, Port: ClusterPort, NoAdvertise: true, Routes: routes}
}

func jetStreamBlock(c *v1alpha1.NatsCluster) *natsconf.JetStream {
	if !c.Spec.JetStreamEnabled() {
		return nil
	}
	js := &natsconf.JetStream{StoreDir: StoreDir, Domain: c.Spec.JetStream.Domain}
	if s := c.Spec.JetStream.FileStore.Size; s != nil {
		js.MaxFileStore = s.Value()
	}
	if m := c.Spec.JetStream.MemoryStore; m != nil {
		js.MaxMemoryStore = m.Size.Value()
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
// part.
type RenderedConf struct {
	Text        string
	RestartHash string
}

// renderConf writes nats.conf and hashes what a reload cannot apply: the
// routes, the users and reloadable passthrough keys are left out of the hash,
// so changing them reloads the servers instead of restarting them.
func renderConf(c *v1alpha1.NatsCluster) (RenderedConf, error) {
	conf, err := NatsConf(c)
	if err != nil {
		return RenderedConf{}, err
	}
	text, err := conf.Render()
	if err != nil {
		return RenderedConf{}, fmt.Errorf("nats.conf: %w", err)
	}
	// A passthrough typo would stop every server at start: refuse it here,
	// for the operator and `kubenats render` alike.
	if err := natsconf.CheckRendered(text); err != nil {
		return RenderedConf{}, err
	}
	restart := *conf
	if conf.Cluster != nil {
		cl := *conf.Cluster
		cl.Routes = nil
		restart.Cluster = &cl
	}
	restart.Authorization, restart.Accounts, restart.SystemAccount = nil, nil, ""
	restart.Extra = map[string]any{}
	for k, v := range conf.Extra {
		if !natsconf.Reloadable(k) {
			restart.Extra[k] = v
		}
	}
	restartText, err := restart.Render()
	if err != nil {
		return RenderedConf{}, err
	}
	sum := sha256.Sum256(restartText)
	return RenderedConf{Text: string(text), RestartHash: hex.EncodeToString(sum[:8])}, nil
}
