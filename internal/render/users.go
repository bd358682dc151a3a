package render

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// In mode users the passwords reach the servers as a file, not through the
// environment: nats.conf includes users.conf, which the Secret
// <name>-users holds and the pods mount beside nats.conf (one projected
// volume). An environment variable never changes in a running process, so
// a rotated password would need a restart; a file is reread on reload.

// UsersConfKey is the users Secret's key, and the file name beside nats.conf.
const UsersConfKey = "users.conf"

// EnvUsersRevision is the users.conf variable that names its content, and
// that nats.conf passes on to the server's metadata (MetadataUsersKey).
const EnvUsersRevision = "KUBENATS_USERS_REVISION"

// Server metadata the operator sets, which every server reports: what it
// loaded of nats.conf (the ConfigMap) and of users.conf (the Secret). Each
// part's mark comes from the very file it names, so a server that read a
// new nats.conf beside an old users.conf (the kubelet refreshes each
// object from its own cache) shows exactly that.
const (
	MetadataConfigKey = "kubenats.io/config"
	MetadataUsersKey  = "kubenats.io/users"
)

// UsersConf is users.conf for the given credentials, and the revision it
// carries. The revision is keyed with the system password (random, never
// shown), so that it names the content without revealing anything of the
// passwords it covers: it is shown in /varz, to whoever reads monitoring.
func UsersConf(c *v1alpha1.NatsCluster, cred Credentials) (text, revision string, _ error) {
	vars := natsconf.Variables{EnvPassword: cred.Client, EnvSystemPassword: cred.System}
	body, err := vars.Render()
	if err != nil {
		return "", "", err
	}
	mac := hmac.New(sha256.New, []byte("kubenats users.conf revision\x00"+cred.System))
	mac.Write(body)
	revision = hex.EncodeToString(mac.Sum(nil)[:8])
	vars[EnvUsersRevision] = revision
	out, err := vars.Render()
	return string(out), revision, err
}
