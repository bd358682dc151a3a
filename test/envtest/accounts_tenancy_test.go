package envtest_test

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestAccountKeysGoOnlyToTheAccountTheyRecord: keys are used only for
// the account their Secret records. A tenant whose account name collides
// with another namespace's (which the 48-bit names of before made a
// minute's work) is played here by putting the victim's keys where the
// tenant's account looks: under its full name, and under its legacy
// name. The first is refused (AccountKeysMismatch, a Warning event,
// nothing issued, and its deletion revokes nothing); the second is not
// migrated and the tenant gets keys of its own. An account of an earlier
// version is migrated from its own legacy Secret, which is then emptied.
//
// Careless variants, each run: the keys found by name used as they are
// (the colliding account takes the victim's public key and issues creds
// with its signing key), the legacy Secret adopted by whoever's legacy
// name it is (the colliding account takes the victim's key), the legacy
// Secret left with its seeds after the migration.
func TestAccountKeysGoOnlyToTheAccountTheyRecord(t *testing.T) {
	t.Parallel()
	platform, victimNS, tenantNS := namespace(t), namespace(t), namespace(t)
	c, _ := jwtCluster(t, platform, func(from *v1alpha1.AccountsFrom) { from.Namespaces = []string{victimNS, tenantNS} })

	victim := natsAccount(victimNS, "orders", c)
	create(t, victim)
	victimKey := accountPublicKey(t, victim)
	victimRef := accounts.AccountRef{Namespace: victimNS, Name: "orders"}
	victimSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: accounts.KeysSecretName(c.Name, victimRef)}}
	get(t, victimSecret)
	victimData := maps.Clone(victimSecret.Data)

	// The victim's keys, as a collision put them before: under the full
	// name of one tenant account, under the legacy name of another.
	plantKeys(t, c, accounts.KeysSecretName(c.Name, accounts.AccountRef{Namespace: tenantNS, Name: "full"}), victimData, victimRef)
	legacyData := maps.Clone(victimData)
	delete(legacyData, accounts.AccountRecordKey)
	plantKeys(t, c, accounts.LegacyKeysSecretName(c.Name, accounts.AccountRef{Namespace: tenantNS, Name: "legacy"}), legacyData, victimRef)
	// An account of an earlier version, with its own legacy Secret.
	own := accounts.AccountRef{Namespace: victimNS, Name: "upgraded"}
	ownKeys, err := accounts.NewAccountKeys(own)
	if err != nil {
		t.Fatal(err)
	}
	ownData := ownKeys.Data()
	delete(ownData, accounts.AccountRecordKey)
	plantKeys(t, c, accounts.LegacyKeysSecretName(c.Name, own), ownData, own)

	full, legacy := natsAccount(tenantNS, "full", c), natsAccount(tenantNS, "legacy", c)
	create(t, full)
	create(t, legacy)
	create(t, natsUser(tenantNS, "app", "full"))
	upgraded := natsAccount(victimNS, "upgraded", c)
	create(t, upgraded)

	if key := accountPublicKey(t, legacy); key == victimKey {
		t.Fatal("the account whose legacy name holds the victim's keys took them")
	}
	if key := accountPublicKey(t, upgraded); key != ownKeys.PublicKey {
		t.Fatalf("the upgraded account has key %s, not its legacy Secret's %s", key, ownKeys.PublicKey)
	}
	moved := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: accounts.KeysSecretName(c.Name, own)}}
	get(t, moved)
	if _, err := accounts.ReadAccountKeysFor(own, ownKeys.PublicKey, moved.Data); err != nil {
		t.Fatalf("the migrated keys do not record their account: %v", err)
	}
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: accounts.LegacyKeysSecretName(c.Name, own)}}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(old), old); err != nil {
			return err
		}
		if len(old.Data[accounts.AccountSeedKey]) > 0 || len(old.Data[accounts.AccountSigningSeedKey]) > 0 {
			return errors.New("the legacy Secret still holds the seeds after the migration")
		}
		return nil
	})

	accountCondition(t, full, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonAccountKeysMismatch)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "app-nats-creds"}}
	poll.Holds(t, 3*time.Second, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(full), full); err != nil {
			return err
		}
		if full.Status.PublicKey != "" {
			return fmt.Errorf("the colliding account shows key %s", full.Status.PublicKey)
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(creds), creds); !apierrors.IsNotFound(err) {
			return fmt.Errorf("creds were issued in the colliding account (%v)", err)
		}
		return nil
	})
	if ready := meta.FindStatusCondition(full.Status.Conditions, v1alpha1.ConditionReady); strings.Contains(ready.Message, victimNS) {
		t.Errorf("the refusal names the victim's namespace: %s", ready.Message)
	}
	eventually(t, wait, func() error {
		var events eventsv1.EventList
		if err := k8s.List(ctx(t), &events, client.InNamespace(tenantNS)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "full" && e.Reason == v1alpha1.ReasonAccountKeysMismatch && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return errors.New("no Warning event on the colliding account")
	})

	// Deleting it revokes nothing with the victim's keys.
	if err := k8s.Delete(ctx(t), full); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(full), full); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the colliding account is still there (%v)", err)
		}
		return nil
	})
	get(t, victimSecret)
	if got, was := string(victimSecret.Data[accounts.AccountRevocationsKey]), string(victimData[accounts.AccountRevocationsKey]); got != was {
		t.Fatalf("the victim's revocations changed from %s to %s", was, got)
	}
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform,
		Name: accounts.KeysSecretName(c.Name, accounts.AccountRef{Namespace: tenantNS, Name: "full"})}}
	get(t, planted)
	if strings.Contains(string(planted.Data[accounts.AccountRevocationsKey]), accounts.AllUsers) {
		t.Fatal("the colliding account's deletion revoked every user with the victim's keys")
	}
}

// TestAccountsOfANamespaceTakenOffAreRefusedByTheServer: a real
// nats-server in mode jwt, run from the trust Secret the operator made,
// is the cluster's one server. A NatsAccount of an admitted namespace
// asks for more connections than the cluster's maxLimits: its JWT
// carries the maximum, the server refuses the connection past it, and
// LimitsWithinMaximum says so. Then the namespace is taken off
// spec.auth.accounts: the connected client is closed, and the user's
// creds get the server's authorization error (an answer, not a hang) at
// every try over a window.
//
// Careless variants, each run: the refusal of before (status only,
// nothing pushed: the creds keep connecting), the maximum applied only to
// limits left unset (the account's 10 stands, the third connection gets
// in).
func TestAccountsOfANamespaceTakenOffAreRefusedByTheServer(t *testing.T) {
	t.Parallel()
	platform, tenant := namespace(t), namespace(t)
	c, trust := jwtCluster(t, platform, func(from *v1alpha1.AccountsFrom) {
		from.Namespaces = []string{tenant}
		from.MaxLimits = &v1alpha1.AccountLimits{Connections: ptr.To[int64](2)}
	})
	s := jwtServer(t, trust, c.StatefulSetName()+"-0")
	serversReady(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: c.StatefulSetName()}}
	get(t, sts)
	ip := loopbackNet() + "1"
	mapHost(t, net.JoinHostPort(ip, fmt.Sprint(render.ClientPort)), s.Addr().String())
	serverPod(t, c, c.StatefulSetName()+"-0", "r1", ip, sts)

	acct := natsAccount(tenant, "app", c)
	acct.Spec.Limits.Connections = ptr.To[int64](10)
	create(t, acct)
	create(t, natsUser(tenant, "app", "app"))
	accountCondition(t, acct, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "app-nats-creds"}}
	get(t, creds)
	credsFile := filepath.Join(t.TempDir(), "user.creds")
	if err := os.WriteFile(credsFile, creds.Data[v1alpha1.CredsKey], 0o600); err != nil {
		t.Fatal(err)
	}
	url := testnats.URL(s)

	first, err := dialCreds(url, credsFile)
	if err != nil {
		t.Fatalf("the user's creds do not connect: %v", err)
	}
	defer first.Close()
	second, err := dialCreds(url, credsFile)
	if err != nil {
		t.Fatalf("second connection: %v", err)
	}
	if third, err := dialCreds(url, credsFile); err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum account active connections") {
		if third != nil {
			third.Close()
		}
		t.Fatalf("third connection: %v, want the server's refusal at the cluster's maximum of 2", err)
	}
	second.Close()
	clamped := accountCondition(t, acct, v1alpha1.ConditionLimitsWithinMaximum, metav1.ConditionFalse, v1alpha1.ReasonLimitsClamped)
	if !strings.Contains(clamped.Message, "connections 10") {
		t.Errorf("LimitsWithinMaximum does not name the limit: %s", clamped.Message)
	}

	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Auth.Accounts.Namespaces = []string{"someone-else"} })
	eventually(t, wait, func() error {
		if !first.IsClosed() {
			return errors.New("the connected client is still connected")
		}
		return nil
	})
	refused := func() error {
		nc, err := dialCreds(url, credsFile)
		if err == nil {
			nc.Close()
			return errors.New("the creds of a namespace taken off still connect")
		}
		if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
			return fmt.Errorf("the connection failed, but not with the server's refusal: %v", err)
		}
		return nil
	}
	eventually(t, wait, refused)
	poll.Holds(t, 3*time.Second, refused)
	accountCondition(t, acct, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonClusterNotAdmitted)
}

// jwtCluster makes a NatsCluster "nats" of one server in mode jwt in ns,
// admitting what edit sets, and returns it with its trust Secret.
func jwtCluster(t *testing.T, ns string, edit func(*v1alpha1.AccountsFrom)) (*v1alpha1.NatsCluster, *corev1.Secret) {
	t.Helper()
	from := &v1alpha1.AccountsFrom{}
	edit(from)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Auth.Mode = v1alpha1.AuthJWT
		s.Auth.Accounts = from
	})
	create(t, c)
	trust := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.TrustSecretName()}}
	get(t, trust)
	return c, trust
}

// jwtServer runs a nats-server named name from nats.conf of mode jwt, as
// natsconf writes it from the trust Secret's public part.
func jwtServer(t *testing.T, trust *corev1.Secret, name string) *server.Server {
	t.Helper()
	port := freePort(t)
	conf := natsconf.Config{ServerName: natsconf.String(name), Port: port, JetStream: &natsconf.JetStream{StoreDir: t.TempDir()},
		Trust: &natsconf.Trust{OperatorJWT: string(trust.Data[render.TrustOperatorJWTKey]),
			SystemAccount: string(trust.Data[render.TrustSystemPublicKey]), SystemAccountJWT: string(trust.Data[render.TrustSystemJWTKey]),
			ResolverDir: t.TempDir()}}
	text, err := conf.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses nats.conf: %v\n%s", err, text)
	}
	return testnats.Start(t, port, func(o *server.Options) {
		*o = *loaded
		o.Host, o.NoLog, o.NoSigs = "127.0.0.1", true, true
	})
}

// plantKeys writes a keys Secret as the operator owns it (its controller
// reference as SetControllerReference writes it): what a collision of
// names, or an earlier version, would have left there.
func plantKeys(t *testing.T, c *v1alpha1.NatsCluster, name string, data map[string][]byte, recordedFor accounts.AccountRef) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name,
			Labels:      map[string]string{render.LabelManagedBy: render.ManagedBy},
			Annotations: map[string]string{"kubenats.io/account": recordedFor.String()},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster",
				Name: c.Name, UID: c.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	create(t, s)
}

func natsAccount(ns, name string, c *v1alpha1.NatsCluster) *v1alpha1.NatsAccount {
	return &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Namespace: c.Namespace, Name: c.Name}}}
}

func natsUser(ns, name, account string) *v1alpha1.NatsUser {
	return &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.NatsUserSpec{Account: account}}
}

// accountPublicKey waits for a's public key in its status.
func accountPublicKey(t *testing.T, a *v1alpha1.NatsAccount) string {
	t.Helper()
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(a), a); err != nil {
			return err
		}
		if a.Status.PublicKey == "" {
			return fmt.Errorf("no public key yet (conditions %+v)", a.Status.Conditions)
		}
		return nil
	})
	return a.Status.PublicKey
}

// accountCondition waits for a's condition of type typ to have status and
// reason, and returns it.
func accountCondition(t *testing.T, a *v1alpha1.NatsAccount, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(a), a); err != nil {
			return err
		}
		got = meta.FindStatusCondition(a.Status.Conditions, typ)
		if got == nil || got.Status != status || got.Reason != reason {
			return fmt.Errorf("%s condition %+v, want %s/%s", typ, got, status, reason)
		}
		return nil
	})
	return *got
}

// dialCreds connects once with a creds file, no reconnect: a refusal is
// the server's answer within the timeout, not a hang.
func dialCreds(url, creds string) (*nats.Conn, error) {
	return nats.Connect(url, nats.UserCredentials(creds), nats.NoReconnect(), nats.Timeout(3*time.Second),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
}
