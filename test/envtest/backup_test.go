package envtest_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestBackupsWaitAndPauseWithoutAJob: a Backup of a cluster that is not
// there waits with the reason (no Job); a paused Backup says so and
// starts no Job over a window; a ScheduledBackup whose schedule does not
// parse is stalled with the parser's word; one that is due makes one
// Backup and no second while the first has not ended. Careless variants
// watched failing: the pause not read (the paused Backup's status said
// ClusterNotFound), and the schedule without its guard on a running
// Backup (a Backup every second).
func TestBackupsWaitAndPauseWithoutAJob(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	backup := func(name string, paused bool) *v1alpha1.Backup {
		b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.BackupSpec{Cluster: "absent", Stream: "ORDERS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}}}
		if paused {
			b.Annotations = map[string]string{v1alpha1.AnnotationPauseReconciliation: "true"}
		}
		create(t, b)
		return b
	}
	readyReason := func(obj client.Object, conds func() []metav1.Condition) (string, error) {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return "", err
		}
		c := meta.FindStatusCondition(conds(), v1alpha1.ConditionReady)
		if c == nil {
			return "", fmt.Errorf("%s has no Ready condition yet", obj.GetName())
		}
		return c.Reason, nil
	}
	waiting, paused := backup("waits", false), backup("paused", true)
	for b, want := range map[*v1alpha1.Backup]string{waiting: "ClusterNotFound", paused: v1alpha1.ReasonReconciliationPaused} {
		eventually(t, wait, func() error {
			reason, err := readyReason(b, func() []metav1.Condition { return b.Status.Conditions })
			if err != nil || reason != want || b.Status.Phase != v1alpha1.BackupPending {
				return fmt.Errorf("Backup %s: phase %s, reason %q (%v); want Pending, %s", b.Name, b.Status.Phase, reason, err, want)
			}
			return nil
		})
	}

	bad := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "every night", Backup: waiting.Spec, Keep: v1alpha1.BackupRetention{Count: 3}}}
	due := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "due"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "@every 1s", Backup: waiting.Spec, Keep: v1alpha1.BackupRetention{Count: 3}}}
	create(t, bad)
	create(t, due)
	eventually(t, wait, func() error {
		reason, err := readyReason(bad, func() []metav1.Condition { return bad.Status.Conditions })
		if err != nil || reason != "InvalidSchedule" || !meta.IsStatusConditionTrue(bad.Status.Conditions, v1alpha1.ConditionStalled) {
			return fmt.Errorf("ScheduledBackup bad: reason %q (%v), want InvalidSchedule and Stalled", reason, err)
		}
		return nil
	})
	scheduled := func() ([]v1alpha1.Backup, error) {
		var list v1alpha1.BackupList
		err := k8s.List(ctx(t), &list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelScheduledBackup: due.Name})
		return list.Items, err
	}
	eventually(t, wait, func() error {
		if items, err := scheduled(); err != nil || len(items) == 0 {
			return fmt.Errorf("the due schedule made no Backup (%v)", err)
		}
		return nil
	})
	// Held over a window of several due times: the first Backup waits for
	// its cluster, so no second is made beside it; nothing starts a Job.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		items, err := scheduled()
		if err != nil || len(items) != 1 {
			t.Fatalf("%d Backups of the schedule (%v), want the one that waits", len(items), err)
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx(t), &jobs, client.InNamespace(ns)); err != nil || len(jobs.Items) != 0 {
			t.Fatalf("%d Jobs (%v), want none: no cluster, and one Backup paused", len(jobs.Items), err)
		}
	}
}

// TestObjectStoreBackupsMountOnlyOptedInKeys: a Backup to an object store
// whose keys' Secret is not opted in waits (SecretNotFound, with the one
// message that does not tell a missing Secret from a forbidden one) and
// starts no Job; labelling the Secret wakes it, and it goes on to its next
// wait. Admission takes a claim or a store, one of them, and a restore
// from a store with the key it names. Careless variant watched failing:
// no opt-in check (the Backup went on to ClusterNotFound, and would mount
// any Secret of the namespace into a Job that sends its key to a store
// the tenant names).
func TestObjectStoreBackupsMountOnlyOptedInKeys(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-keys"},
		StringData: map[string]string{"accessKeyID": "id", "secretAccessKey": "secret"}}
	create(t, keys)
	store := &v1alpha1.S3Bucket{Endpoint: "s3.example.com", Bucket: "nats", CredentialsSecret: keys.Name}
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-s3"},
		Spec: v1alpha1.BackupSpec{Cluster: "absent", Stream: "ORDERS", S3: store}}
	create(t, b)
	reasonIs := func(want string) func() error {
		return func() error {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
			if c == nil || c.Reason != want {
				return fmt.Errorf("Backup %s: Ready %+v, want reason %s", b.Name, c, want)
			}
			return nil
		}
	}
	eventually(t, wait, reasonIs("SecretNotFound"))
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		var jobs batchv1.JobList
		if err := k8s.List(ctx(t), &jobs, client.InNamespace(ns)); err != nil || len(jobs.Items) != 0 {
			t.Fatalf("%d Jobs (%v) for a Backup whose keys are not opted in", len(jobs.Items), err)
		}
	}
	patch := client.MergeFrom(keys.DeepCopy())
	keys.Labels = map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}
	if err := k8s.Patch(ctx(t), keys, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, reasonIs("ClusterNotFound"))

	both := b.DeepCopy()
	both.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "both"}
	both.Spec.VolumeClaim = &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}
	assertInvalid(t, k8s.Create(ctx(t), both, client.DryRunAll), "a backup goes to a volumeClaim or to s3, one of them")
	neither := both.DeepCopy()
	neither.Spec.VolumeClaim, neither.Spec.S3 = nil, nil
	assertInvalid(t, k8s.Create(ctx(t), neither, client.DryRunAll), "a backup goes to a volumeClaim or to s3, one of them")

	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}, Spec: v1alpha1.StreamSpec{Name: "ORDERS",
		Subjects: []string{"orders.>"}, Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "absent"}}, Restore: &v1alpha1.StreamRestore{S3: store}}}
	assertInvalid(t, k8s.Create(ctx(t), s, client.DryRunAll), "path goes with volumeClaim or s3")
	s.Spec.Restore.Path = "prod/to-s3"
	if err := k8s.Create(ctx(t), s, client.DryRunAll); err != nil {
		t.Fatalf("a restore from a key in a store: %v", err)
	}
}

// TestRestoreOfAnAccountNamesItsUser: a Stream of an account (mode jwt)
// restores as a NatsUser it names; without one it is refused at
// admission, with the message that says what to add. So do a Backup and
// a restore of a cluster in another namespace (a tenant's, on a
// platform's cluster). Careless variants watched failing: the rule left
// as it was (every Stream of an account with a restore refused, the one
// naming its user too); clusterNamespace without a rule (a Backup that
// would mount the platform's credentials in the tenant's namespace
// admitted).
func TestRestoreOfAnAccountNamesItsUser(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	// The account a Stream names must exist (the admission webhook).
	create(t, &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}})
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}, Spec: v1alpha1.StreamSpec{
		Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "nats"}, Account: "orders"},
		Name:   "ORDERS", Subjects: []string{"orders.>"}, Restore: &v1alpha1.StreamRestore{Backup: "orders-nightly"}}}
	assertInvalid(t, k8s.Create(ctx(t), s, client.DryRunAll), "the NatsUser of this namespace it restores as (restore.user)")
	s.Spec.Restore.User = "backup"
	if err := k8s.Create(ctx(t), s, client.DryRunAll); err != nil {
		t.Fatalf("a restore into an account as its user: %v", err)
	}
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-account"},
		Spec: v1alpha1.BackupSpec{Cluster: "nats", User: "backup", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}}}
	if err := k8s.Create(ctx(t), b, client.DryRunAll); err != nil {
		t.Fatalf("a Backup as a NatsUser: %v", err)
	}

	// A tenant's backup and restore on a platform's cluster, elsewhere:
	// only as a NatsUser of the tenant's namespace.
	b.Spec.ClusterNamespace, b.Spec.User = "platform", ""
	assertInvalid(t, k8s.Create(ctx(t), b, client.DryRunAll), "a NatsCluster of another namespace is reached as a NatsUser of this namespace (user)")
	b.Spec.User = "backup"
	if err := k8s.Create(ctx(t), b, client.DryRunAll); err != nil {
		t.Fatalf("a tenant's Backup of a cluster elsewhere, as its user: %v", err)
	}
	s.Spec.Cluster.Namespace, s.Spec.Account, s.Spec.Restore.User = "platform", "", ""
	assertInvalid(t, k8s.Create(ctx(t), s, client.DryRunAll), "the NatsUser of this namespace it restores as (restore.user)")
}
