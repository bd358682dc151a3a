package topologyproc

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// oneServer is a single-server NatsCluster in mode users. Its client port
// serves TLS and accepts plaintext too: these tests are about leafnodes
// and gateways, and their clients dial the servers' loopback addresses,
// which no client certificate names.
func oneServer(name, ns string, edit func(*v1alpha1.NatsClusterSpec)) *v1alpha1.NatsCluster {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	c.Spec.Replicas = ptr.To[int32](1)
	c.Spec.JetStream.Enabled = ptr.To(false)
	c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{AllowPlaintext: ptr.To(true)}
	edit(&c.Spec)
	return c
}

// credentials are what the controller would read or make once.
func credentials(leafPassword string) render.Credentials {
	return render.Credentials{Client: "appPassw0rd", System: "sysPassw0rd", Topology: render.TopologyCredentials{LeafnodePassword: leafPassword}}
}

func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// crosses publishes on subject from pub until sub receives it: interest
// crosses a leafnode or gateway a moment after the subscription.
func crosses(t *testing.T, pub, sub *nats.Conn, subject string) {
	t.Helper()
	s, err := sub.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "hello " + subject
	poll.Until(t, 15*time.Second, func() error {
		if err := pub.Publish(subject, []byte(want)); err != nil {
			return err
		}
		m, err := s.NextMsg(300 * time.Millisecond)
		if err != nil {
			return fmt.Errorf("%s did not cross: %w", subject, err)
		}
		if string(m.Data) != want {
			return fmt.Errorf("got %q", m.Data)
		}
		return nil
	})
}

// leafCount is how many leafnodes a server's /leafz lists.
func leafCount(p *proc) (int, error) {
	body, err := p.monitor("/leafz")
	if err != nil {
		return 0, err
	}
	return strings.Count(body, `"name":`), nil
}

// TestLeafnodeJoinsWithTheSecretsCredentials: a NatsCluster that accepts
// leafnodes, as rendered, and a plain nats-server at the edge that dials
// it with the user and the password of <name>-leafnodes-auth. Messages
// cross both ways, between the edge's clients and the cluster's
// application account; an edge with a wrong password is refused, as the
// hub's own log says.
//
// Careless variants run against it: the leafnode authorization without
// its account (the edge lands in the global account and nothing crosses
// with APP's clients: "up did not cross"); the authorization block left
// out (nats-server then holds leafnodes to the client users, and the edge
// with the Secret's credentials never joins: "hub lists 0 leafnodes").
func TestLeafnodeJoinsWithTheSecretsCredentials(t *testing.T) {
	t.Parallel()
	hub := oneServer("hub", "site", func(s *v1alpha1.NatsClusterSpec) {
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
	})
	cred := credentials("leafPassw0rd1")
	hubPod := materialize(t, hub, cred, nil, t.TempDir(), newIP())
	// The password the edge gets is the one in the generated Secret.
	password := hubPod.secrets[hub.LeafnodeAuthSecretName()][render.PasswordKey]
	if password == "" {
		t.Fatal("no generated leafnode password")
	}
	hubProc := hubPod.run(t)

	edgeIP := newIP()
	plain(t, edgeIP, fmt.Sprintf("leafnodes { remotes: [ { url: %q } ] }\n", fmt.Sprintf("nats-leaf://leaf:%s@%s:%d", password, hubProc.ip, render.LeafnodePort)))
	poll.Until(t, 15*time.Second, func() error {
		if n, err := leafCount(hubProc); err != nil || n != 1 {
			return fmt.Errorf("hub lists %d leafnodes (%v)", n, err)
		}
		return nil
	})

	app := connect(t, fmt.Sprintf("nats://%s:%s@%s:4222", v1alpha1.DefaultAppUser, cred.Client, hubProc.ip))
	edge := connect(t, "nats://"+edgeIP+":4222")
	crosses(t, edge, app, "up")
	crosses(t, app, edge, "down")

	rogueIP := newIP()
	plain(t, rogueIP, fmt.Sprintf("leafnodes { remotes: [ { url: %q } ] }\n", fmt.Sprintf("nats-leaf://leaf:wrong%s@%s:%d", password, hubProc.ip, render.LeafnodePort)))
	refused := regexp.MustCompile(`lid:\d+ - authentication error`)
	poll.Until(t, 15*time.Second, func() error {
		if !hubProc.logged(refused) {
			return errors.New("the hub's log has no leafnode authentication error")
		}
		return nil
	})
	poll.Holds(t, 3*time.Second, func() error {
		if n, err := leafCount(hubProc); err != nil || n != 1 {
			return fmt.Errorf("hub lists %d leafnodes (%v): the wrong password joined", n, err)
		}
		return nil
	})
}
