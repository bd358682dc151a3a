package e2e_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestClientTLSTransitionUnderLoad moves a cluster whose clients connect
// in plaintext to TLS only, as docs/tls.md tells: the servers accept
// plaintext beside TLS (allowPlaintext), one client publishes in
// plaintext and one with the CA from the credentials Secret, each to an
// R3 stream with message IDs; then allowPlaintext goes false. The servers
// are replaced one at a time, gated; afterwards a client without TLS is
// refused by every server, every acknowledged message of both publishers
// is read back, and the TLS publisher's longest stall is reported. The
// plaintext publisher keeps going until its server is replaced, and is
// cut off then: that is what the step asks for.
//
// Careless variant this fails, run: servers that keep accepting plaintext
// whenever they serve TLS (allow_non_tls always written): every server
// still lets the plaintext client in after allowPlaintext: false. Leaving
// allow_non_tls out of the restart hash is not one: the pods' client-tls
// mark changes with it and restarts them all the same (tried: it passes).
func TestClientTLSTransitionUnderLoad(t *testing.T) {
	e2ekit.Parallel(t, 50*time.Second)
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{AllowPlaintext: ptr.To(true)}
	})
	cred := credentials(t, f)
	if !strings.HasPrefix(cred["url"], "tls://") || cred["ca.crt"] == "" {
		t.Fatalf("credentials Secret: url %q, ca.crt %d bytes; want tls:// and the CA even while plaintext is accepted", redacted(cred["url"]), len(cred["ca.crt"]))
	}
	tlsPub, tlsJS, _ := startPublishing(t, f)
	defer tlsPub.Halt()
	plain := plaintextConn(t, f, cred)
	if _, err := plain.TLSConnectionState(); err == nil {
		t.Fatal("the plaintext client speaks TLS: it proves nothing about plaintext")
	}
	plainJS, err := natsjs.New(plain)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		_, err := plainJS.CreateStream(testCtx(t), natsjs.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}, Replicas: 3})
		return err
	})
	plainPub := e2ekit.StartPublisher(plainJS, "plain.msg")
	defer plainPub.Halt()
	eventually(t, upgradeTimeout, func() error {
		if a, b := tlsPub.Count(), plainPub.Count(); a < 100 || b < 100 {
			return fmt.Errorf("%d messages acknowledged over TLS, %d in plaintext; waiting for 100 each", a, b)
		}
		return nil
	})

	pods := recordPods(t, f.NS)
	pods.seen(t, f.Pods)
	began := time.Now()
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Spec.TLS.Client.AllowPlaintext = ptr.To(false)
		return cluster.Client.Update(testCtx(t), c)
	})
	waitPodsMarked(t, f, render.AnnotationClientTLS, plan.ClientTLSRequired)
	took := time.Since(began)
	// The port itself, not the pods' mark: an operator that marks the
	// pods but leaves allow_non_tls in place passes waitClientTLS.
	for _, pod := range f.Pods {
		nc, err := nats.Connect(strings.ReplaceAll(podURLs(f, []string{pod}), "tls://", "nats://"), clusterDNS(),
			nats.UserInfo(cred["user"], cred["password"]), nats.NoReconnect(), nats.Timeout(5*time.Second))
		if err == nil {
			nc.Close()
			t.Errorf("%s accepts a plaintext client after allowPlaintext: false", pod)
		} else if !errors.Is(err, nats.ErrSecureConnRequired) && !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s refuses a plaintext client for another reason than TLS: %v", pod, err)
		}
		if n := len(pods.uids(pod)); n != 2 {
			t.Errorf("%s has had %d pods, want exactly one replacement (2)", pod, n)
		}
	}
	acked := tlsPub.Count()
	eventually(t, upgradeTimeout, func() error {
		if got := tlsPub.Count(); got < acked+100 {
			return fmt.Errorf("%d messages acknowledged over TLS, waiting for %d", got, acked+100)
		}
		return nil
	})
	tlsPub.Halt()
	plainPub.Halt()
	tlsAcked, stall := tlsPub.Result()
	plainAcked, _ := plainPub.Result()
	checkEveryIDStoredIn(t, tlsJS, "UPGRADE", tlsAcked, e2ekit.StoredCount(t, tlsJS, "UPGRADE", tlsAcked, explainIn(tlsJS)))
	checkEveryIDStoredIn(t, tlsJS, "PLAIN", plainAcked, e2ekit.StoredCount(t, tlsJS, "PLAIN", plainAcked, explainIn(tlsJS)))
	t.Logf("plaintext refused in %s; %d messages acknowledged over TLS and %d in plaintext, none lost; the TLS publisher's longest stall %s",
		took.Round(time.Millisecond), tlsAcked, plainAcked, stall.Round(time.Millisecond))
}

// plaintextConn is an application client of f without TLS: nats:// and
// no TLS configuration, as a client written before the move has.
func plaintextConn(t *testing.T, f *formed, cred map[string]string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(strings.ReplaceAll(podURLs(f, f.Pods), "tls://", "nats://"), clusterDNS(),
		nats.UserInfo(cred["user"], cred["password"]), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// redacted is a URL without its password, for a failure message.
func redacted(url string) string {
	if at := strings.LastIndex(url, "@"); at >= 0 {
		return "tls://…" + url[at:]
	}
	return url
}
