package realnode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestBackupOfAnAccountOnTheRealNode: on a platform's cluster in auth
// mode jwt, a tenant's Backup, in the tenant's own namespace, that names
// the cluster there (clusterNamespace) and a NatsUser of the tenant's
// (spec.user) and no stream backs up every stream of that user's
// account, and nothing of another account, in a Job of the tenant's
// namespace that connects with the user's creds alone. One stream of the
// account is then lost on the server, and a Stream of that account, in
// the tenant's namespace, whose restore names the Backup and the user
// gets it back with every message under its sequence number.
// Careless variants watched failing: the Job's identity taken from the
// cluster alone, as before spec.user (the Backup failed NotSupported:
// mode jwt has no cluster-wide user); the cluster looked up in the
// Backup's namespace, as before clusterNamespace (Pending,
// ClusterNotFound). The other account's stream is not in the set: status
// counts two streams, not three.
func TestBackupOfAnAccountOnTheRealNode(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns, team := namespace(t), namespace(t)
	c := formCluster(t, ns, "jwt", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Auth.Mode = v1alpha1.AuthJWT
		s.Auth.Accounts = &v1alpha1.AccountsFrom{Namespaces: []string{team}}
	})
	storage := resource.MustParse("64Mi")
	// orders is the tenant's account, in its namespace; billing is the
	// platform's own.
	account := func(ns, name string) *v1alpha1.NatsAccount {
		return &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: c.Name, Namespace: c.Namespace},
				Limits: v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: &storage}}}}
	}
	user := func(ns, name, account string) *v1alpha1.NatsUser {
		return &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.NatsUserSpec{Account: account}}
	}
	app, backupUser, other := user(team, "app", "orders"), user(team, "backup", "orders"), user(ns, "other-app", "billing")
	for _, o := range []client.Object{account(team, "orders"), account(ns, "billing"), app, backupUser, other} {
		if err := node.Client.Create(ctxOf(t), o); err != nil {
			t.Fatal(err)
		}
	}

	// The orders account's streams, and one of billing's.
	ordersJS := e2ekit.AppJetStream(t, clientConn(t, c, nats.UserCredentials(credsFile(t, app))))
	const total = 50
	for _, name := range []string{"ORDERS", "PAYMENTS"} {
		createStream(t, ordersJS, natsjs.StreamConfig{Name: name, Subjects: []string{name + ".>"}})
		for i := 1; i <= total; i++ {
			if _, err := ordersJS.Publish(ctxOf(t), name+".new", []byte(fmt.Sprintf("%s-%d", name, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	billingJS := e2ekit.AppJetStream(t, clientConn(t, c, nats.UserCredentials(credsFile(t, other))))
	createStream(t, billingJS, natsjs.StreamConfig{Name: "INVOICES", Subjects: []string{"invoices.>"}})

	b := takeBackup(t, team, "orders-account", v1alpha1.BackupSpec{Cluster: c.Name, ClusterNamespace: c.Namespace, User: backupUser.Name})
	if st := b.Status; st.Streams != 2 || st.Messages != 2*total {
		t.Fatalf("the backup of account orders holds %d streams, %d messages; want ORDERS and PAYMENTS, %d messages", st.Streams, st.Messages, 2*total)
	}

	// ORDERS is lost, and declared again as restored from the Backup.
	if err := ordersJS.DeleteStream(ctxOf(t), "ORDERS"); err != nil {
		t.Fatal(err)
	}
	restoreStream(t, &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "orders"}, Spec: v1alpha1.StreamSpec{
		Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: c.Name, Namespace: c.Namespace}, Account: "orders"},
		Name:   "ORDERS", Subjects: []string{"ORDERS.>"}, Replicas: 1,
		Restore: &v1alpha1.StreamRestore{Backup: b.Name, User: backupUser.Name},
	}})
	s, err := ordersJS.Stream(ctxOf(t), "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.CachedInfo().State; st.Msgs != total || st.FirstSeq != 1 || st.LastSeq != total {
		t.Fatalf("restored in account orders: %+v, want sequences 1 to %d", st, total)
	}
	for _, seq := range []uint64{1, total} {
		m, err := s.GetMsg(ctxOf(t), seq)
		if err != nil || string(m.Data) != fmt.Sprintf("ORDERS-%d", seq) {
			t.Fatalf("restored sequence %d: %v", seq, err)
		}
	}
}

// credsFile waits for u's creds Secret and writes its creds file for
// nats.UserCredentials.
func credsFile(t *testing.T, u *v1alpha1.NatsUser) string {
	t.Helper()
	s := &corev1.Secret{}
	poll.Until(t, time.Minute, func() error {
		return node.Client.Get(ctxOf(t), client.ObjectKey{Namespace: u.Namespace, Name: u.CredentialsSecretName()}, s)
	})
	path := filepath.Join(t.TempDir(), u.Name+".creds")
	if err := os.WriteFile(path, s.Data[v1alpha1.CredsKey], 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
