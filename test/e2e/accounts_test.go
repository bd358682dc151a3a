package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestAccountsOfTwoTeams: two teams in two namespaces, an account each on
// one three-server NatsCluster in mode jwt, a NatsUser each; all that the
// operator makes of them, used the way applications use it (the creds
// Secret alone).
//
//   - Isolation: a publish in orders is not seen in billing (over a
//     window), until orders exports it to billing; billing's import is
//     reported as left out until then.
//   - Limits: the connection past orders' limit is refused by the server,
//     and raising the limit lets it in on every server with no server
//     restarted or reloaded (same pod UIDs, process start and config load
//     times in /varz): the account JWT reached the servers.
//   - Revocation: deleting a user closes its live connection within 5 s
//     and its creds are refused on every server, including one restarted
//     after the deletion, from the first try once it is ready (the
//     revocation is in the stored account JWT); the account's other user
//     still gets in everywhere.
//   - A namespace the cluster does not admit gets the same refusal as a
//     cluster that does not exist, no keys, and nothing on the servers:
//     no account of it in any server's /accountz or resolver store.
//
// Careless variant watched failing: a revocation kept in memory only,
// not written to the keys Secret (the next pass signs a JWT without it:
// the restarted server authenticates the deleted user, whose connection
// is then refused only for the account's connection limit). It would
// fail too for one account for all teams (isolation), users signed by
// the operator's key (no creds work) and an import written though not
// exported; those variants were not run. Run too: every user of the
// account revoked with the deleted one (jwt.All beside the user's key:
// "app-2, the account's other user, refused on nats-0 after app was
// deleted"); an account of a namespace not admitted pushed with keys made
// in memory before the admission is looked at, its status still
// ClusterNotAdmitted and no keys Secret ("the servers hold an account the
// cluster does not admit: nats-2 has the account <outsider>/stranger").
// Not run: a restarted server that admits the revoked user before it
// refuses it; no operator change found makes one (its full resolver reads
// the revocation from its store, and takes no older JWT over it), so the
// first try is asserted against a change of the server or the store.
func TestAccountsOfTwoTeams(t *testing.T) {
	e2ekit.Parallel(t, 45*time.Second)
	platform, teamA, teamB, outsider := namespace(t), namespace(t), namespace(t), namespace(t)
	diagnoseOnFailure(t, platform)
	f := formNamed(t, platform, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthJWT
		s.Auth.Accounts = &v1alpha1.AccountsFrom{Namespaces: []string{teamA, teamB}}
	})
	uids := podUIDs(t, platform, f.Pods)
	ctx := testCtx(t)
	ref := v1alpha1.ClusterRef{Name: "nats", Namespace: platform}

	three := int64(3)
	storage := resource.MustParse("64Ki")
	orders := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "orders"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: ref, Limits: v1alpha1.AccountLimits{Connections: &three,
			JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: &storage}}}}
	billing := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: teamB, Name: "billing"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: ref, Limits: v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{}},
			Imports: []v1alpha1.AccountImport{{
				Account: v1alpha1.AccountRef{Name: "orders", Namespace: teamA}, Subject: "orders.>",
				Type: v1alpha1.ExportStream, LocalSubject: "from-orders.>"}}}}
	app := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "app"}, Spec: v1alpha1.NatsUserSpec{Account: "orders"}}
	// A second user of orders, which the revocation of app must spare.
	app2 := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "app-2"}, Spec: v1alpha1.NatsUserSpec{Account: "orders"}}
	invoicer := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: teamB, Name: "invoicer"}, Spec: v1alpha1.NatsUserSpec{Account: "billing"}}
	stranger := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: outsider, Name: "stranger"}, Spec: v1alpha1.NatsAccountSpec{Cluster: ref}}
	nowhere := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: outsider, Name: "nowhere"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "absent", Namespace: platform}}}
	for _, o := range []client.Object{orders, billing, app, app2, invoicer, stranger, nowhere} {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}

	credsA, credsB, credsA2 := waitCreds(t, app), waitCreds(t, invoicer), waitCreds(t, app2)
	waitAccount(t, billing, metav1.ConditionFalse, v1alpha1.ReasonImportNotExported)

	// Isolation, over a window: billing sees nothing of orders, under the
	// subject orders publishes or the one its import would map to.
	b := credsConn(t, f, f.Pods[1], credsB)
	seen := atomic.Int64{}
	for _, subject := range []string{"orders.new", "from-orders.new", ">"} {
		// Billing's own traffic (the operator's JetStream reads as its
		// user in billing) passes here too: only orders' payload counts.
		if _, err := b.Subscribe(subject, func(m *nats.Msg) {
			if string(m.Data) == "o-1" {
				seen.Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	a := credsConn(t, f, f.Pods[0], credsA)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := a.Publish("orders.new", []byte("o-1")); err != nil {
			t.Fatal(err)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("billing received %d messages published in orders before any export", n)
	}

	// Exported to billing: the import now works, through the mapping.
	got := make(chan string, 64)
	if _, err := b.Subscribe("from-orders.>", func(m *nats.Msg) { got <- m.Subject }); err != nil {
		t.Fatal(err)
	}
	patchAccount(t, orders, func(s *v1alpha1.NatsAccountSpec) {
		s.Exports = []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportStream,
			To: []v1alpha1.AccountRef{{Name: "billing", Namespace: teamB}}}}
	})
	waitAccount(t, billing, metav1.ConditionTrue, v1alpha1.ReasonReady)
	eventually(t, 15*time.Second, func() error {
		if err := a.Publish("orders.new", []byte("o-2")); err != nil {
			return err
		}
		select {
		case s := <-got:
			if s != "from-orders.new" {
				return fmt.Errorf("billing got %s, want from-orders.new", s)
			}
			return nil
		case <-time.After(300 * time.Millisecond):
			return errors.New("billing has not received orders' export")
		}
	})

	// JetStream: a Stream that names orders lives in orders, managed as
	// the operator's user of orders; billing does not list it; a write
	// past orders' storage limit is refused by the servers, and the
	// status shows the usage.
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "orders"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &ref, Account: "orders"},
			Name: "ORDERS", Subjects: []string{"ord.>"}, Storage: "file", Replicas: 1}}
	if err := cluster.Client.Create(ctx, stream); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, stream, wait)
	jsA, jsB := appJetStream(t, a), appJetStream(t, b)
	if _, err := jsA.Stream(ctx, "ORDERS"); err != nil {
		t.Fatalf("orders' own user does not see its stream: %v", err)
	}
	for names := jsB.StreamNames(ctx); ; {
		name, ok := <-names.Name()
		if !ok {
			break
		}
		if name == "ORDERS" {
			t.Fatal("billing lists orders' stream")
		}
	}
	var full error
	for i := 0; i < 200 && full == nil; i++ {
		_, full = jsA.Publish(ctx, "ord.new", make([]byte, 4096))
	}
	if full == nil || !strings.Contains(strings.ToLower(full.Error()), "resource limits exceeded") {
		t.Fatalf("writes past orders' 64Ki of storage: %v, want the servers' refusal", full)
	}
	eventually(t, 40*time.Second, func() error {
		get(t, orders)
		if js := orders.Status.JetStream; js == nil || js.Storage < 32<<10 || js.Streams != 1 {
			return fmt.Errorf("status.jetstream %+v, want the stored bytes", js)
		}
		return nil
	})

	// Limits: connections to server 0 until the server refuses one; the
	// refusal must come with at most three of orders' connections open
	// (the servers also count the account's connections on the other
	// servers, as they learn of them, so it may come earlier).
	ip0 := f.IP(f.Pods[0])
	open := 1 // a
	var refusal error
	for refusal == nil && open <= 3 {
		if _, refusal = connect(t, "tls://"+ip0+":4222", nats.UserCredentials(credsA), addrTLS(t, f)); refusal == nil {
			open++
		}
	}
	if refusal == nil || !strings.Contains(strings.ToLower(refusal.Error()), "maximum account active connections exceeded") {
		t.Fatalf("with %d of orders' connections open (limit 3): %v, want the server's refusal", open, refusal)
	}
	eventually(t, 40*time.Second, func() error {
		get(t, orders)
		if orders.Status.Connections < int64(open) {
			return fmt.Errorf("status.connections %d, want %d", orders.Status.Connections, open)
		}
		return nil
	})
	loads := serverLoads(t, f)
	ten := int64(10)
	patchAccount(t, orders, func(s *v1alpha1.NatsAccountSpec) { s.Limits.Connections = &ten })
	// Raised, the refused connection gets in, on every server, and no
	// server was restarted or reloaded for it (the same process start and
	// configuration load times): the account JWT carried the change.
	for _, p := range f.Pods {
		eventually(t, 15*time.Second, func() error {
			_, err := connect(t, "tls://"+f.IP(p)+":4222", nats.UserCredentials(credsA), addrTLS(t, f))
			return err
		})
	}
	if now := serverLoads(t, f); !maps.Equal(now, loads) {
		t.Fatalf("a server restarted or reloaded for an account change: start and load times %v, were %v", now, loads)
	}

	// Revocation: the user's live connection closes within 5 s of the
	// deletion, and its creds are refused on every server.
	closed := make(chan time.Time, 1)
	credsConn(t, f, f.Pods[2], credsA, nats.ClosedHandler(func(*nats.Conn) { closed <- time.Now() }))
	deleted := time.Now()
	if err := cluster.Client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-closed:
		t.Logf("the deleted user's connection closed %s after the deletion", at.Sub(deleted).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the deleted user's connection is still open 5 s after the deletion")
	}
	get(t, orders)
	for _, p := range f.Pods {
		var view struct {
			Detail struct {
				Revoked map[string]any `json:"revoked_user"`
				JWT     string         `json:"jwt"`
			} `json:"account_detail"`
		}
		err := monitor(f.IP(p), "/accountz?acc="+orders.Status.PublicKey, &view)
		t.Logf("%s: users revoked in orders: %v (%v)", p, view.Detail.Revoked, err)
	}
	for _, p := range f.Pods {
		refusedCreds(t, f, p, credsA)
	}
	spared := func(when string) {
		t.Helper()
		for _, p := range f.Pods {
			if _, err := connect(t, "tls://"+f.IP(p)+":4222", nats.UserCredentials(credsA2), addrTLS(t, f)); err != nil {
				t.Errorf("app-2, the account's other user, refused on %s %s: %v", p, when, err)
			}
		}
	}
	spared("after app was deleted")
	// A server restarted after the deletion refuses the creds too, at
	// the first try once it is ready: it read the revocation from its
	// store before taking any client, and learned nothing later.
	restartPod(t, platform, f.Pods[2])
	refusedCreds(t, f, f.Pods[2], credsA)
	spared("after a restart")
	// And after the account's next push (a limit changed): the revocation
	// is recorded where every JWT is signed from, not only in the last one.
	eleven := int64(11)
	patchAccount(t, orders, func(s *v1alpha1.NatsAccountSpec) { s.Limits.Connections = &eleven })
	eventually(t, wait, func() error {
		get(t, orders)
		if c := meta.FindStatusCondition(orders.Status.Conditions, v1alpha1.ConditionReady); c == nil ||
			c.ObservedGeneration != orders.Generation || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("orders not pushed at generation %d yet: %+v", orders.Generation, c)
		}
		return nil
	})
	for _, p := range f.Pods {
		refusedCreds(t, f, p, credsA)
	}
	spared("after the account's next push")
	delete(uids, f.Pods[2])
	now := podUIDs(t, platform, f.Pods[:2])
	if !maps.Equal(now, uids) {
		t.Fatalf("servers replaced by an account change: pod UIDs %v, were %v", now, uids)
	}

	// Rotation of billing's signing key: the invoicer's creds are written
	// again (its own key unchanged), its connected client stays connected
	// while the previous key is kept, and once it is dropped the old creds
	// are refused on every server while the new ones get in.
	// The re-issue is told by the creds' signer, not by their bytes: the
	// creds read at the start may have been written again since with the
	// same key (a clean CI run took such a write, before the rotation, for
	// the rotated creds, which the drop of the old key then refused).
	get(t, invoicer)
	userKey := invoicer.Status.PublicKey
	oldSigner := credsSigner(t, []byte(readFile(t, credsB)))
	patchAccountAnnotation(t, billing, v1alpha1.AnnotationRotateSigningKey, "1")
	var newCreds string
	eventually(t, wait, func() error {
		s := &corev1.Secret{}
		if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: teamB, Name: invoicer.CredentialsSecretName()}, s); err != nil {
			return err
		}
		if credsSigner(t, s.Data[v1alpha1.CredsKey]) == oldSigner {
			get(t, billing)
			return fmt.Errorf("the invoicer's creds are not re-issued with a new key yet; billing: %+v", billing.Status.Conditions)
		}
		newCreds = t.TempDir() + "/invoicer-rotated.creds"
		return os.WriteFile(newCreds, s.Data[v1alpha1.CredsKey], 0o600)
	})
	if !b.IsConnected() {
		t.Fatal("the invoicer's client was disconnected by the re-issue, with the previous key still kept")
	}
	waitCondition(t, billing, v1alpha1.ConditionSigningKeyRotated, metav1.ConditionTrue)
	get(t, invoicer)
	if invoicer.Status.PublicKey != userKey {
		t.Fatalf("the rotation changed the user's own key: %s, was %s", invoicer.Status.PublicKey, userKey)
	}
	for _, p := range f.Pods {
		refusedCreds(t, f, p, credsB)
		if _, err := connect(t, "tls://"+f.IP(p)+":4222", nats.UserCredentials(newCreds), addrTLS(t, f)); err != nil {
			t.Fatalf("%s refused the re-issued creds (%s): %v; what each server holds of billing:%s",
				p, credsIssuer(t, newCreds), err, accountSeen(f, billing.Status.PublicKey))
		}
	}

	// Not admitted, and not there: one reason, one text, no keys.
	waitAccount(t, stranger, metav1.ConditionFalse, v1alpha1.ReasonClusterNotAdmitted)
	waitAccount(t, nowhere, metav1.ConditionFalse, v1alpha1.ReasonClusterNotAdmitted)
	if s, n := readyMessage(stranger), readyMessage(nowhere); s != n {
		t.Fatalf("a cluster that does not admit and one that is not there read differently: %q and %q", s, n)
	}
	var secrets corev1.SecretList
	if err := cluster.Client.List(ctx, &secrets, client.InNamespace(platform)); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Annotations["kubenats.io/account"], outsider+"/") {
			t.Fatalf("keys made for an account the cluster does not admit: %s", s.Name)
		}
	}
	// Nor anything on the servers, whatever keys it would have been
	// pushed with: each server's accounts (/accountz) and its resolver's
	// store, by the name in each account's JWT, over a window.
	trust := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: f.Cluster.TrustSecretName()}}
	get(t, trust)
	sys := systemUser(t, f, f.Pods[0], trust)
	for end := time.Now().Add(5 * time.Second); ; {
		held := accountsHeld(t, f, sys)
		for server, names := range held {
			for _, name := range names {
				if strings.HasPrefix(name, outsider+"/") {
					t.Fatalf("the servers hold an account the cluster does not admit: %s has the account %s", server, name)
				}
			}
		}
		if time.Now().After(end) {
			t.Logf("accounts the servers hold: %v", held)
			break
		}
		time.Sleep(time.Second)
	}
}

// accountsHeld are the names (from their JWTs) of the accounts each
// server has: those it loaded (/accountz) and those its resolver stores
// ($SYS.REQ.CLAIMS.LIST, answered by every server), by server name. An
// account with no JWT ($G) is named by its key.
func accountsHeld(t *testing.T, f *formed, sys *nats.Conn) map[string][]string {
	t.Helper()
	keys := map[string]map[string]bool{}
	add := func(server, key string) {
		if keys[server] == nil {
			keys[server] = map[string]bool{}
		}
		keys[server][key] = true
	}
	for _, p := range f.Pods {
		var z struct {
			Server   string   `json:"server_id"`
			Accounts []string `json:"accounts"`
		}
		if err := monitor(f.IP(p), "/accountz", &z); err != nil {
			t.Fatalf("%s /accountz: %v", p, err)
		}
		for _, k := range z.Accounts {
			add(p, k)
		}
	}
	inbox := sys.NewRespInbox()
	replies, err := sys.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer replies.Unsubscribe()
	if err := sys.PublishRequest("$SYS.REQ.CLAIMS.LIST", inbox, nil); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for stored < len(f.Pods) {
		m, err := replies.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("%d of %d servers listed their stored accounts: %v", stored, len(f.Pods), err)
		}
		var list struct {
			Server struct {
				Name string `json:"name"`
			} `json:"server"`
			Data []string `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &list); err != nil || list.Server.Name == "" {
			t.Fatalf("a stored accounts list: %s (%v)", m.Data, err)
		}
		stored++
		for _, k := range list.Data {
			add(list.Server.Name, k)
		}
	}
	names := map[string]string{}
	out := map[string][]string{}
	for server, ks := range keys {
		for k := range ks {
			if _, ok := names[k]; !ok {
				names[k] = k
				if m, err := sys.Request("$SYS.REQ.ACCOUNT."+k+".CLAIMS.LOOKUP", nil, 5*time.Second); err == nil {
					if c, err := jwt.DecodeAccountClaims(string(m.Data)); err == nil {
						names[k] = c.Name
					}
				}
			}
			out[server] = append(out[server], names[k])
		}
	}
	return out
}

// waitCreds waits for u's creds Secret and writes its creds file for
// nats.UserCredentials.
func waitCreds(t *testing.T, u *v1alpha1.NatsUser) string {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: u.Namespace, Name: u.CredentialsSecretName()}}
	eventually(t, wait, func() error {
		return cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(s), s)
	})
	if url := string(s.Data[v1alpha1.CredsURLKey]); !strings.HasPrefix(url, "tls://nats.") || !strings.HasSuffix(url, ".svc:4222") || len(s.Data[v1alpha1.CredsCAKey]) == 0 {
		t.Fatalf("the creds Secret's url is %q (ca.crt %d bytes), want the cluster's Service over TLS, and its CA", s.Data[v1alpha1.CredsURLKey], len(s.Data[v1alpha1.CredsCAKey]))
	}
	path := t.TempDir() + "/" + u.Name + ".creds"
	if err := os.WriteFile(path, s.Data[v1alpha1.CredsKey], 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// credsConn connects to the server at ip with a creds file, or fails.
func credsConn(t *testing.T, f *formed, pod, creds string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := connect(t, "tls://"+f.IP(pod)+":4222", append([]nats.Option{nats.UserCredentials(creds), addrTLS(t, f)}, opts...)...)
	if err != nil {
		t.Fatalf("connecting with %s to %s: %v", creds, pod, err)
	}
	return nc
}

// refusedCreds requires the server at ip to refuse creds: NATS speaks
// first, so the refusal is the server's -ERR, not a timeout.
func refusedCreds(t *testing.T, f *formed, pod, creds string) {
	t.Helper()
	_, err := connect(t, "tls://"+f.IP(pod)+":4222", nats.UserCredentials(creds), addrTLS(t, f))
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Fatalf("revoked creds on %s: %v, want the server's authorization violation", pod, err)
	}
}

// waitAccount waits for a's Ready condition to have status and reason.
func waitAccount(t *testing.T, a *v1alpha1.NatsAccount, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, wait, func() error {
		get(t, a)
		c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s/%s Ready %+v, want %s %s", a.Namespace, a.Name, c, status, reason)
		}
		return nil
	})
}

func readyMessage(a *v1alpha1.NatsAccount) string {
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// patchAccount changes a's spec, retrying on conflicts.
func patchAccount(t *testing.T, a *v1alpha1.NatsAccount, edit func(*v1alpha1.NatsAccountSpec)) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		get(t, a)
		edit(&a.Spec)
		return cluster.Client.Update(testCtx(t), a)
	})
}

// restartPod deletes a server's pod and waits for its successor to run.
func restartPod(t *testing.T, ns, name string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	get(t, p)
	old := p.UID
	if err := cluster.Client.Delete(testCtx(t), p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() error {
		p := &corev1.Pod{}
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		if p.UID == old || !e2ekit.PodReady(p) {
			return fmt.Errorf("%s not back yet", name)
		}
		return nil
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// patchAccountAnnotation sets an annotation on a, retrying on conflicts.
func patchAccountAnnotation(t *testing.T, a *v1alpha1.NatsAccount, key, value string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		get(t, a)
		if a.Annotations == nil {
			a.Annotations = map[string]string{}
		}
		a.Annotations[key] = value
		return cluster.Client.Update(testCtx(t), a)
	})
}

// waitCondition waits for a's condition of type kind to have status.
func waitCondition(t *testing.T, a *v1alpha1.NatsAccount, kind string, status metav1.ConditionStatus) {
	t.Helper()
	eventually(t, wait, func() error {
		get(t, a)
		if c := meta.FindStatusCondition(a.Status.Conditions, kind); c == nil || c.Status != status {
			return fmt.Errorf("%s/%s %s: %+v, want %s", a.Namespace, a.Name, kind, c, status)
		}
		return nil
	})
}

// userClaimsOf decodes the user JWT of a creds file.
func userClaimsOf(t *testing.T, creds []byte) *jwt.UserClaims {
	t.Helper()
	token, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	return uc
}

// credsSigner is the key that signed a creds file's user JWT.
func credsSigner(t *testing.T, creds []byte) string { return userClaimsOf(t, creds).Issuer }

// credsIssuer is who signed the user JWT of a creds file, and when.
func credsIssuer(t *testing.T, path string) string {
	uc := userClaimsOf(t, []byte(readFile(t, path)))
	return fmt.Sprintf("user %s signed by %s at %s", uc.Subject, uc.Issuer, time.Unix(uc.IssuedAt, 0).UTC().Format(time.RFC3339))
}

// accountSeen is what each server of f holds of account pub, for a
// failure: when its JWT was issued, its signing keys, the users it
// revokes.
func accountSeen(f *formed, pub string) string {
	var b strings.Builder
	for _, p := range f.Pods {
		var view struct {
			Detail struct {
				Claim *struct {
					IssuedAt int64 `json:"iat"`
					Nats     struct {
						SigningKeys json.RawMessage `json:"signing_keys"`
					} `json:"nats"`
				} `json:"decoded_jwt"`
				Revoked map[string]time.Time `json:"revoked_user"`
			} `json:"account_detail"`
		}
		if err := monitor(f.IP(p), "/accountz?acc="+pub, &view); err != nil || view.Detail.Claim == nil {
			fmt.Fprintf(&b, "\n  %s: %v", p, err)
			continue
		}
		c := view.Detail.Claim
		fmt.Fprintf(&b, "\n  %s: JWT issued at %s, signing keys %s, revoked %v", p,
			time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339), c.Nats.SigningKeys, view.Detail.Revoked)
	}
	return b.String()
}

// serverLoads are each server's process start and last configuration load
// (/varz start and config_load_time), as "start/load".
func serverLoads(t *testing.T, f *formed) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range f.Pods {
		var v struct {
			Start    time.Time `json:"start"`
			LoadTime time.Time `json:"config_load_time"`
		}
		if err := monitor(f.IP(p), "/varz", &v); err != nil {
			t.Fatalf("%s /varz: %v", p, err)
		}
		out[p] = v.Start.Format(time.RFC3339Nano) + "/" + v.LoadTime.Format(time.RFC3339Nano)
	}
	return out
}
