package envtest_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestAccountValidation sends bad NatsAccounts to the real API server and
// checks that the refusal names the field. The careless variant each case
// catches is a schema without that rule (the subject pattern dropped, the
// limit's Maximum left out): the create is then accepted, and the case
// fails on "accepted by the API server".
func TestAccountValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsAccountSpec
	cases := []struct {
		name string
		edit func(*spec)
		want []string
	}{
		{"connections-out-of-range", func(s *spec) { s.Limits.Connections = ptr.To[int64](1_000_001) },
			[]string{"spec.limits.connections", "less than or equal to 1000000"}},
		{"connections-below-unlimited", func(s *spec) { s.Limits.Connections = ptr.To[int64](-2) },
			[]string{"spec.limits.connections", "greater than or equal to -1"}},
		{"payload-over-64mib", func(s *spec) { s.Limits.Payload = ptr.To[int64](64<<20 + 1) },
			[]string{"spec.limits.payload", "less than or equal to 67108864"}},
		{"storage-over-1pi", func(s *spec) {
			s.Limits.JetStream = &v1alpha1.AccountJetStreamLimits{DiskStorage: quantity("2Pi")}
		}, []string{"spec.limits.jetstream.diskStorage", "must be at most 1Pi"}},
		{"storage-zero", func(s *spec) {
			s.Limits.JetStream = &v1alpha1.AccountJetStreamLimits{DiskStorage: quantity("0")}
		}, []string{"spec.limits.jetstream.diskStorage", "must be positive"}},
		{"export-subject-with-a-space", func(s *spec) {
			s.Exports = []v1alpha1.AccountExport{{Subject: "orders new", Type: v1alpha1.ExportStream, Public: true}}
		}, []string{"spec.exports[0].subject", "should match"}},
		{"export-subject-empty-token", func(s *spec) {
			s.Exports = []v1alpha1.AccountExport{{Subject: "orders..new", Type: v1alpha1.ExportStream, Public: true}}
		}, []string{"spec.exports[0].subject", "should match"}},
		{"export-wildcard-not-last", func(s *spec) {
			s.Exports = []v1alpha1.AccountExport{{Subject: "orders.>.new", Type: v1alpha1.ExportStream, Public: true}}
		}, []string{"spec.exports[0].subject", "should match"}},
		{"export-for-nobody", func(s *spec) {
			s.Exports = []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportStream}}
		}, []string{"spec.exports[0]", "names the accounts it is for (to) or is public"}},
		{"export-response-type-on-a-stream", func(s *spec) {
			s.Exports = []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportStream, Public: true, ResponseType: "Stream"}}
		}, []string{"spec.exports[0]", "responseType applies to service exports only"}},
		{"import-subject-with-a-space", func(s *spec) {
			s.Imports = []v1alpha1.AccountImport{{Account: v1alpha1.AccountRef{Name: "a"}, Subject: " orders", Type: v1alpha1.ExportStream}}
		}, []string{"spec.imports[0].subject", "should match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name},
				Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}}
			tc.edit(&a.Spec)
			assertInvalid(t, k8s.Create(ctx(t), a, client.DryRunAll), tc.want...)
		})
	}
	t.Run("a-valid-account-is-accepted", func(t *testing.T) {
		a := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "valid"},
			Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"},
				Limits: v1alpha1.AccountLimits{Connections: ptr.To[int64](-1),
					JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: quantity("1Gi"), Streams: ptr.To[int64](10)}},
				Exports: []v1alpha1.AccountExport{{Subject: "orders.*.>", Type: v1alpha1.ExportService,
					To: []v1alpha1.AccountRef{{Name: "b", Namespace: "team-b"}}, ResponseType: "Stream"}}}}
		if err := k8s.Create(ctx(t), a, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUserValidation: the same for NatsUsers' permissions.
func TestUserValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsUserSpec
	cases := []struct {
		name string
		edit func(*spec)
		want []string
	}{
		{"publish-subject-with-a-space", func(s *spec) {
			s.Permissions = &v1alpha1.UserPermissions{Publish: &v1alpha1.SubjectPermission{Allow: []v1alpha1.Subject{"orders new"}}}
		}, []string{"spec.permissions.publish.allow[0]", "should match"}},
		{"subscribe-deny-trailing-dot", func(s *spec) {
			s.Permissions = &v1alpha1.UserPermissions{Subscribe: &v1alpha1.SubjectPermission{Deny: []v1alpha1.Subject{"orders."}}}
		}, []string{"spec.permissions.subscribe.deny[0]", "should match"}},
		{"allowed-and-denied", func(s *spec) {
			s.Permissions = &v1alpha1.UserPermissions{Publish: &v1alpha1.SubjectPermission{
				Allow: []v1alpha1.Subject{"orders.>"}, Deny: []v1alpha1.Subject{"orders.>"}}}
		}, []string{"spec.permissions.publish", "both allowed and denied"}},
		{"responses-out-of-range", func(s *spec) {
			s.Permissions = &v1alpha1.UserPermissions{AllowResponses: &v1alpha1.ResponsePermission{MaxMsgs: -5}}
		}, []string{"spec.permissions.allowResponses.maxMsgs", "greater than or equal to -1"}},
		{"unknown-connection-type", func(s *spec) { s.ConnectionTypes = []v1alpha1.ConnectionType{"TELNET"} },
			[]string{"spec.connectionTypes[0]", "Unsupported value"}},
		{"no-account", func(s *spec) { s.Account = "" },
			[]string{"spec.account"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name},
				Spec: v1alpha1.NatsUserSpec{Account: "team"}}
			tc.edit(&u.Spec)
			assertInvalid(t, k8s.Create(ctx(t), u, client.DryRunAll), tc.want...)
		})
	}
}

// TestAuthModeToJWTRefused: a running cluster cannot be switched to or
// from mode jwt, and the refusal says how to migrate. The careless
// variant, a mode field without the transition rule, lets the update
// through and would strand every client and stream.
func TestAuthModeToJWTRefused(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "modes", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
	create(t, c)
	get(t, c)
	// A patch, not an update: the operator's first pass adds its deletion
	// guard to the object meanwhile, and an update of the version read
	// before would be refused for that (409) before any rule is checked.
	before := c.DeepCopy()
	c.Spec.Auth.Mode = v1alpha1.AuthJWT
	assertInvalid(t, k8s.Patch(ctx(t), c, client.MergeFrom(before), client.DryRunAll),
		"auth.mode cannot change to or from jwt", "create a new NatsCluster", "docs/accounts.md")

	j := natsCluster(ns, "jwt", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Auth.Mode = v1alpha1.AuthJWT
	})
	if err := k8s.Create(ctx(t), j, client.DryRunAll); err != nil {
		t.Fatalf("a new cluster in mode jwt: %v", err)
	}
	u := natsCluster(ns, "users-with-accounts", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Accounts = &v1alpha1.AccountsFrom{Namespaces: []string{"team-a"}}
	})
	assertInvalid(t, k8s.Create(ctx(t), u, client.DryRunAll), "accounts applies to mode jwt only")
}

// TestJetStreamAccountValidation: a JetStream resource's account names a
// NatsAccount of a NatsCluster target, and stays what it was. Careless
// variants caught: account accepted beside a connection (it would be
// ignored there, the object made with the connection's rights), account
// changed in place (the object would be made again in the other account
// and the first left behind).
func TestJetStreamAccountValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	conn := &v1alpha1.Connection{Servers: []string{"nats://nats.example.com:4222"}}
	withConnection := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "with-connection"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Connection: conn, Account: "orders"}, Name: "S", Subjects: []string{"s"}}}
	assertInvalid(t, k8s.Create(ctx(t), withConnection, client.DryRunAll), "account applies to a NatsCluster target")

	// The account it names exists: one that does not is refused at
	// creation (account_webhook_test.go).
	create(t, &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}})
	kv := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "moved"},
		Spec: v1alpha1.KeyValueSpec{Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "nats"}, Account: "orders"}, Bucket: "b"}}
	if err := k8s.Create(ctx(t), kv); err != nil {
		t.Fatal(err)
	}
	for _, account := range []string{"billing", ""} {
		assertInvalid(t, updateKeyValue(t, kv, func(s *v1alpha1.KeyValueSpec) { s.Account = account }), "account is immutable")
	}
}

// updateKeyValue applies edit to the live kv and updates it, again while
// the write loses a race with the operator's own (its finalizer, its
// status): the answer is the API server's verdict on the edit.
func updateKeyValue(t *testing.T, kv *v1alpha1.KeyValue, edit func(*v1alpha1.KeyValueSpec)) error {
	t.Helper()
	for range 50 {
		live := &v1alpha1.KeyValue{}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(kv), live); err != nil {
			t.Fatal(err)
		}
		edit(&live.Spec)
		if err := k8s.Update(ctx(t), live); !apierrors.IsConflict(err) {
			return err
		}
	}
	t.Fatal("50 updates in a row lost a race")
	return nil
}
