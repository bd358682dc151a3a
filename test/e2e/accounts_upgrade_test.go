package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestAccountsSurviveARollingUpdate: an account, its user and an R3
// stream of it on a three-server cluster in mode jwt; the NATS operator's
// signing key is rotated (kubenats.io/rotate-operator-signing-key), which
// replaces every server twice by gated rolling updates (the same rollout
// as an upgrade: first into trusting the new key beside the old, then,
// once every account is signed with it, into trusting it alone; the older
// nats-server here, 2.14.10, answered "JetStream not enabled for account"
// to a JWT account's stream create, so the version stays).
//
// While it runs the user's creds are tried on every ready server every
// 200 ms, and once it began those of a user of another account, which no
// server had loaded before: every try on a server that is still ready,
// not deleted and the same pod once the try failed gets in. Not only the
// server's refusal counts: a hang, a closed connection or a failed TLS
// handshake on a ready server is a failure too.
// Afterwards each server was replaced exactly twice (pod UIDs), the
// account shows the new key, and the servers trust the new key alone: a user of an account signed with
// the old key is refused by every server (a server stores a JWT of any
// issuer and answers "jwt updated", so only a connection tells), one
// signed with the new key gets in. Then, as for any rolling update, the
// user's creds get in on every server (each new pod found the account in
// the resolver's store on its claim), the stream holds its messages, and
// a limit changed afterwards is pushed to every server.
//
// Careless variants: a rotation in one step (the new key alone in the
// operator JWT, signing at once), run: the servers not yet restarted
// store the other account's JWT, signed again at once, but cannot trust
// it, and refuse its user ("a ready server refused the user's creds"),
// and each server restarts once, not twice. A drop that does not wait
// for the accounts, run, passes here: every account is signed again
// within milliseconds of the promote, seconds before the first restart
// (TestOperatorKeys in internal/plan holds that wait). Pushes aimed at the
// servers the account was first pushed to would leave the new pods with
// the old limit (not run). Not yet seen failing for the wider count of
// failures: probes that mark a server ready as soon as its monitor port
// answers (/varz for the startup and readiness probes) were run, and every
// try on a ready server still got in (955 tries; the client port opens
// within the kubelet's first probe here), so that variant does not tell.
func TestAccountsSurviveARollingUpdate(t *testing.T) {
	e2ekit.Parallel(t, 90*time.Second)
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Auth.Mode = v1alpha1.AuthJWT })
	disk := resource.MustParse("1Mi")
	scene := startAccountScene(t, f, v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: &disk}}, 3)
	trust := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.Cluster.TrustSecretName()}}
	get(t, trust)
	oldSeed, oldKey, err := accounts.OperatorSigner(accounts.TrustValues(trust.Data))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if get(t, scene.acct); scene.acct.Status.SignedBy != oldKey {
			return fmt.Errorf("the account is signed by %q, want the operator's signing key %s", scene.acct.Status.SignedBy, oldKey)
		}
		return nil
	})

	// An account no server has loaded yet (nobody connected with its
	// creds): a server loads it from its store at its user's first
	// connection, and then checks who signed it.
	late := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}}
	lateUser := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late-svc"}, Spec: v1alpha1.NatsUserSpec{Account: "late"}}
	for _, o := range []client.Object{late, lateUser} {
		if err := cluster.Client.Create(testCtx(t), o); err != nil {
			t.Fatal(err)
		}
	}
	lateCreds := waitCreds(t, lateUser)

	probe := probeCreds(t, f, scene.creds)
	c := f.Cluster
	eventually(t, wait, func() error {
		get(t, c)
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[v1alpha1.AnnotationRotateOperatorSigningKey] = "2026-12"
		return cluster.Client.Update(testCtx(t), c)
	})
	started := time.Now()
	// Once the rotation began, while servers still run the operator JWT
	// of before, the late account's user connects for the first time.
	eventually(t, wait, func() error {
		if get(t, trust); accounts.TrustValues(trust.Data)[render.TrustOperatorRotationKey] == "" {
			return fmt.Errorf("the rotation has not begun")
		}
		return nil
	})
	probe.add(lateCreds)
	eventually(t, 2*upgradeTimeout, func() error {
		get(t, c)
		r := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionOperatorSigningKeyRotated)
		if r == nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("rotation: %+v", r)
		}
		return nil
	})
	// The servers confirm the final keys by reload, and the last one's
	// replacement into them can come a moment later: the count waits for
	// the rollout to end (Ready: every pod on the StatefulSet's revision).
	eventually(t, upgradeTimeout, func() error {
		get(t, c)
		if ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != c.Generation {
			return fmt.Errorf("Ready %+v after the rotation", ready)
		}
		return nil
	})
	refusals, tries, uids := probe.end()
	if len(refusals) > 0 {
		t.Fatalf("during the rotation a ready server failed the user's creds (%d of %d tries), first: %s", len(refusals), tries, strings.Join(refusals[:min(5, len(refusals))], "; "))
	}
	for _, p := range f.Pods {
		if len(uids[p]) != 3 {
			t.Errorf("%s ran as %d pods during the rotation, want 3 (replaced twice)", p, len(uids[p]))
		}
	}
	if tries < 30 {
		t.Fatalf("only %d tries of the creds during the rotation", tries)
	}
	t.Logf("the rotation took %s: %d tries of the creds on ready servers, none refused", time.Since(started).Round(time.Second), tries)

	get(t, trust)
	values := accounts.TrustValues(trust.Data)
	newSeed, newKey, err := accounts.OperatorSigner(values)
	switch {
	case err != nil:
		t.Fatal(err)
	case newKey == oldKey:
		t.Fatal("the signing key did not change")
	case values[render.TrustOperatorSigningKeysKey] != newKey:
		t.Fatalf("the operator JWT lists %q, want %s alone", values[render.TrustOperatorSigningKeysKey], newKey)
	}
	if get(t, scene.acct); scene.acct.Status.SignedBy != newKey {
		t.Fatalf("the account is signed by %s, want %s", scene.acct.Status.SignedBy, newKey)
	}
	sys := systemUser(t, f, f.Pods[0], trust)
	oldUser, newUser := pushedAccountUser(t, f, sys, oldSeed), pushedAccountUser(t, f, sys, newSeed)
	for _, p := range f.Pods {
		url := "tls://" + f.IP(p) + ":4222"
		if _, err := connect(t, url, oldUser, addrTLS(t, f)); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
			t.Fatalf("%s: a user of an account signed with the dropped key: %v, want the server's authorization violation", p, err)
		}
		if _, err := connect(t, url, newUser, addrTLS(t, f)); err != nil {
			t.Fatalf("%s: a user of an account signed with the new key: %v", p, err)
		}
	}

	scene.credsGetIn(t, f.Pods)
	scene.streamHolds(t, "EVENTS", f.Pods)
	scene.limitBites(t, f.Pods)
}

// credsProbe tries creds files on every ready server of a cluster every
// 200 ms, and records each pod it saw by UID.
type credsProbe struct {
	stop, done chan struct{}
	mu         sync.Mutex
	creds      []string
	refusals   []string
	tries      int
	uids       map[string]map[types.UID]bool
}

// probeCreds starts a credsProbe of creds on f's servers.
func probeCreds(t *testing.T, f *formed, creds string) *credsProbe {
	t.Helper()
	tlsOpt := addrTLS(t, f)
	ctx := testCtx(t)
	p := &credsProbe{stop: make(chan struct{}), done: make(chan struct{}), uids: map[string]map[types.UID]bool{}, creds: []string{creds}}
	t.Cleanup(func() { p.end() })
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			for _, name := range f.Pods {
				pod := &corev1.Pod{}
				if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, pod); err != nil {
					continue
				}
				p.saw(name, pod.UID)
				if !pod.DeletionTimestamp.IsZero() || !podReady(pod) {
					continue
				}
				for _, creds := range p.credsNow() {
					nc, err := nats.Connect("tls://"+f.IP(name)+":4222", nats.UserCredentials(creds), tlsOpt,
						nats.NoReconnect(), nats.Timeout(2*time.Second))
					if err == nil {
						nc.Close()
					} else if !strings.Contains(strings.ToLower(err.Error()), "authorization violation") && !stillServing(ctx, pod) {
						// The server went away meanwhile (its pod
						// deleted or no longer ready): not a failure
						// of the rotation.
						err = nil
					}
					p.tried(name, creds, err)
				}
			}
		}
	}()
	return p
}

// add tries creds too from now on.
func (p *credsProbe) add(creds string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.creds = append(p.creds, creds)
}

func (p *credsProbe) credsNow() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.creds)
}

func (p *credsProbe) saw(name string, uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.uids[name] == nil {
		p.uids[name] = map[types.UID]bool{}
	}
	p.uids[name][uid] = true
}

// stillServing says whether pod, read again after a try on it failed, is
// the same pod, not being deleted and still ready: a server going away
// fails tries for a moment before its pod says so (the kubelet marks the
// deletion first, then stops the server), never after.
func stillServing(ctx context.Context, pod *corev1.Pod) bool {
	now := &corev1.Pod{}
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(pod), now); err != nil {
		return false
	}
	return now.UID == pod.UID && now.DeletionTimestamp.IsZero() && podReady(now)
}

// tried counts a try; err is its failure on a server that is still
// serving: the server's authorization violation, or any other error
// (a timeout, a closed connection, a TLS failure).
func (p *credsProbe) tried(name, creds string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if err != nil {
		p.refusals = append(p.refusals, fmt.Sprintf("%s failed %s at %s: %v", name, filepath.Base(creds), time.Now().Format("15:04:05.000"), err))
	}
}

// end stops the probe and returns the refusals, the tries and the UIDs
// of each pod seen.
func (p *credsProbe) end() ([]string, int, map[string]map[types.UID]bool) {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusals, p.tries, p.uids
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
