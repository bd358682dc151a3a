package topologyproc

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// hubConf is a hub outside Kubernetes that wants a user and password of
// its leafnodes.
func hubConf(ip string) string {
	return fmt.Sprintf("leafnodes { host: %q, port: 7422, authorization { user: edge, password: hubPassw0rd } }\n", ip)
}

// hubAt runs a hub on an address of its own.
func hubAt(t *testing.T) *proc {
	ip := newIP()
	return plain(t, ip, hubConf(ip))
}

// loadedLeafnodes is the leafnodes mark a server reports in /varz: which
// copy of <name>-leafnodes it loaded.
func loadedLeafnodes(p *proc) (string, error) {
	body, err := p.monitor("/varz")
	if err != nil {
		return "", err
	}
	var v struct {
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return "", err
	}
	return v.Metadata[render.MetadataLeafnodesKey], nil
}

func wantLeafs(t *testing.T, p *proc, n int) {
	t.Helper()
	poll.Until(t, 20*time.Second, func() error {
		if got, err := leafCount(p); err != nil || got != n {
			return fmt.Errorf("%s lists %d leafnodes, want %d (%v)", p.ip, got, n, err)
		}
		return nil
	})
}

// TestRemoteChangesByReload: a NatsCluster dials a hub run by the test
// with the user and password of an opted-in Secret; its remote moved to
// another hub in the spec reaches the running server by reload: the
// restart hash stays, the same process (same pid) drops the first hub and
// joins the second, a message crosses to it, and the server reports the
// new leafnodes mark, which is how the operator knows the reload took.
//
// Careless variant run against it: the leafnodes revision left out of
// nats.conf's metadata (the mark never changes: "still reports"). (The
// remotes kept in the restart hash are caught by the render test
// TestLeafnodeRemotesReloadAcceptRestarts: a password remote's URLs are
// variables of leafnodes.conf, so nats.conf itself does not change here.)
func TestRemoteChangesByReload(t *testing.T) {
	t.Parallel()
	hub1, hub2 := hubAt(t), hubAt(t)
	users := map[string]map[string]string{"hub-user": {"user": "edge", "password": "hubPassw0rd"}}
	edgeAt := func(hub *proc) *v1alpha1.NatsCluster {
		return oneServer("edge", "site", func(s *v1alpha1.NatsClusterSpec) {
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{{
				Name: "hub", URLs: []string{fmt.Sprintf("nats-leaf://%s:%d", hub.ip, render.LeafnodePort)},
				UserSecretRef: &v1alpha1.LocalSecretRef{Name: "hub-user"},
			}}}
		})
	}
	// What the controller reads from the opted-in Secret.
	cred := credentials("")
	cred.Topology.Remotes = map[string]render.RemoteSecrets{"hub": {User: "edge", Password: "hubPassw0rd", Version: "uid/1"}}

	before := edgeAt(hub1)
	edgePod := materialize(t, before, cred, users, t.TempDir(), newIP())
	edge := edgePod.run(t)
	wantLeafs(t, hub1, 1)
	firstMark, err := loadedLeafnodes(edge)
	if err != nil || firstMark == "" {
		t.Fatalf("no leafnodes mark in /varz (%v)", err)
	}
	pid := edge.cmd.Process.Pid

	after := edgeAt(hub2)
	confBefore, err := render.Conf(before)
	if err != nil {
		t.Fatal(err)
	}
	confAfter, err := render.Conf(after)
	if err != nil {
		t.Fatal(err)
	}
	if confBefore.RestartHash != confAfter.RestartHash {
		t.Fatal("the restart hash changed: the operator would restart the servers for a remote")
	}
	edgePod.rematerialize(t, after, cred, users)
	edge.reload()

	wantLeafs(t, hub2, 1)
	wantLeafs(t, hub1, 0)
	poll.Until(t, 10*time.Second, func() error {
		mark, err := loadedLeafnodes(edge)
		if err != nil || mark == firstMark {
			return fmt.Errorf("the server still reports leafnodes mark %s (%v)", mark, err)
		}
		return nil
	})
	if edge.cmd.Process.Pid != pid || edge.cmd.ProcessState != nil {
		t.Fatal("the server process was restarted")
	}
	client := connect(t, fmt.Sprintf("nats://%s:%s@%s:4222", v1alpha1.DefaultAppUser, cred.Client, edge.ip))
	crosses(t, client, connect(t, "nats://"+hub2.ip+":4222"), "to.hub2")
}
