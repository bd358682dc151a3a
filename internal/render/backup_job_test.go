package render_test

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func backupOf(c *v1alpha1.NatsCluster) *v1alpha1.Backup {
	return &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "orders-nightly", Namespace: c.Namespace},
		Spec: v1alpha1.BackupSpec{Cluster: c.Name, Stream: "ORDERS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}}}
}

func withCredentials(c *v1alpha1.NatsCluster) {
	c.Status.CredentialsSecretRef = &corev1.LocalObjectReference{Name: c.CredentialsSecretName()}
}

// TestBackupJobRunsTheDataPathWithOnlyWhatItNeeds: the Job's pod runs
// kubenats-backup with the cluster's own credentials from files, no API
// token, hardened, memory-bounded, and is no server of the cluster (the
// cluster's Services, budget and policy do not select it; its policy lets
// it in). Careless variant watched failing: the pod labelled with the
// cluster's name and instance, as its other children are (selected as a
// server).
func TestBackupJobRunsTheDataPathWithOnlyWhatItNeeds(t *testing.T) {
	c := cluster(withCredentials)
	job, err := render.BackupJob(backupOf(c), c, nil, "ghcr.io/kubenats/kubenats:v1")
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template
	ctr := pod.Spec.Containers[0]
	args := strings.Join(ctr.Args, " ")
	for _, want := range []string{"take", "-stream ORDERS", "-to /backup-volume/backups/orders-nightly", "-report /dev/termination-log",
		"-user-file /etc/kubenats/credentials/user", "-password-file /etc/kubenats/credentials/password", "-tls-ca /etc/kubenats/credentials/ca.crt"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if ctr.Command[0] != render.BackupBinary || *pod.Spec.AutomountServiceAccountToken || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("command %v, token %v, restart %s", ctr.Command, *pod.Spec.AutomountServiceAccountToken, pod.Spec.RestartPolicy)
	}
	if !*ctr.SecurityContext.ReadOnlyRootFilesystem || ctr.Resources.Limits.Memory().Cmp(render.BackupMemoryLimit) != 0 {
		t.Errorf("root filesystem writable or memory not bounded: %+v %v", ctr.SecurityContext, ctr.Resources.Limits)
	}
	podLabels := labels.Set(pod.Labels)
	if labels.SelectorFromSet(render.SelectorLabels(c)).Matches(podLabels) {
		t.Errorf("the backup pod %v is selected as one of the cluster's servers", pod.Labels)
	}
	np, err := render.NetworkPolicy(cluster(withCredentials, withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true})))
	if err != nil {
		t.Fatal(err)
	}
	admitted := slices.ContainsFunc(ruleFor(t, np, render.ClientPort).From, func(p networkingv1.NetworkPolicyPeer) bool {
		return p.PodSelector != nil && p.NamespaceSelector == nil && labels.SelectorFromSet(p.PodSelector.MatchLabels).Matches(podLabels)
	})
	if !admitted {
		t.Errorf("the cluster's NetworkPolicy does not let the backup pod reach the client port")
	}
	token := cluster(withCredentials, withAuthMode(v1alpha1.AuthToken))
	if job, _ := render.BackupJob(backupOf(token), token, nil, "img"); !slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "-token-file") {
		t.Errorf("mode token: args %v", job.Spec.Template.Spec.Containers[0].Args)
	}
	for name, c := range map[string]*v1alpha1.NatsCluster{
		"mode jwt":       cluster(withCredentials, withAuthMode(v1alpha1.AuthJWT)),
		"no credentials": cluster(),
	} {
		if _, err := render.BackupJob(backupOf(c), c, nil, "img"); err == nil {
			t.Errorf("%s: a Job was rendered", name)
		}
	}
}

// TestObjectStoreJobsMountOnlyTheStoresKeys: a Backup to an object store
// runs its Job with the s3:// place and the store's flags, the keys
// mounted from the user's Secret as the two files kubenats-backup reads
// (never the Secret whole: a user's Secret may hold more), the CA from its
// own Secret, and no claim; its removal and a Stream's restore from it
// reach the same place. Careless variant watched failing: the keys'
// Secret mounted whole (no items).
func TestObjectStoreJobsMountOnlyTheStoresKeys(t *testing.T) {
	c := cluster(withCredentials)
	b := backupOf(c)
	b.Spec.VolumeClaim = nil
	b.Spec.S3 = &v1alpha1.S3Bucket{Endpoint: "s3.example.com:9000", Bucket: "nats", Prefix: "prod/orders",
		CredentialsSecret: "s3-keys", CASecret: "s3-ca", Region: "eu-west-1"}
	take, err := render.BackupJob(b, c, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: c.Namespace}, Spec: v1alpha1.StreamSpec{Name: "ORDERS"}}
	restore, err := render.RestoreJob(s, c, render.BackupSource{S3: b.Spec.S3, Path: b.Spec.S3.Key(b.Name)}, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	remove := render.RemoveJob(b, "img")
	for verb, job := range map[string]*batchv1.Job{"-to": take, "-from": restore, "-dir": remove} {
		pod := job.Spec.Template.Spec
		args := strings.Join(pod.Containers[0].Args, " ")
		for _, want := range []string{verb + " s3://nats/prod/orders/orders-nightly", "-s3-endpoint s3.example.com:9000",
			"-s3-credentials /etc/kubenats/store-keys", "-s3-ca /etc/kubenats/store-ca/ca.crt", "-s3-region eu-west-1"} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: args %q lack %q", job.Name, args, want)
			}
		}
		for _, v := range pod.Volumes {
			switch {
			case v.PersistentVolumeClaim != nil:
				t.Errorf("%s mounts claim %s for a backup in an object store", job.Name, v.PersistentVolumeClaim.ClaimName)
			case v.Secret != nil && v.Secret.SecretName == "s3-keys":
				if got := keysOf(v.Secret.Items); got != "accessKeyID,secretAccessKey" {
					t.Errorf("%s mounts the keys' Secret as %q", job.Name, got)
				}
			case v.Secret != nil && v.Secret.SecretName == "s3-ca":
				if got := keysOf(v.Secret.Items); got != "ca.crt" {
					t.Errorf("%s mounts the CA's Secret as %q", job.Name, got)
				}
			}
		}
	}
}

func keysOf(items []corev1.KeyToPath) string {
	var keys []string
	for _, i := range items {
		keys = append(keys, i.Key)
	}
	return strings.Join(keys, ",")
}

// TestBackupOfEveryStreamTakesAll: a Backup without a stream runs
// `take -all`, never `-stream` with an empty name. Careless variant
// watched failing: -stream "" passed on (the Job's usage error).
func TestBackupOfEveryStreamTakesAll(t *testing.T) {
	c := cluster(withCredentials)
	b := backupOf(c)
	b.Spec.Stream = ""
	job, err := render.BackupJob(b, c, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.HasPrefix(args, "take -all -to /backup-volume/backups/orders-nightly") || strings.Contains(args, "-stream") {
		t.Fatalf("args %q", args)
	}
}

// TestABackupsRateReachesItsJob: spec.maxMiBPerSecond (a Backup's, a
// restore's) is the Job's -max-mib-per-second, and without it the Job is
// not paced. Careless
// variant watched failing: the field not rendered (the Job read at full
// speed).
func TestABackupsRateReachesItsJob(t *testing.T) {
	c := cluster(withCredentials)
	b := backupOf(c)
	if args := strings.Join(mustBackupJob(t, c).Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(args, "-max-mib-per-second") {
		t.Errorf("an unpaced backup: args %q", args)
	}
	b.Spec.MaxMiBPerSecond = 50
	job, err := render.BackupJob(b, c, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "-max-mib-per-second 50 ") {
		t.Errorf("a backup at 50 MiB/s: args %q", args)
	}
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: c.Namespace}, Spec: v1alpha1.StreamSpec{Name: "ORDERS",
		Restore: &v1alpha1.StreamRestore{Backup: b.Name, MaxMiBPerSecond: 20}}}
	restore, err := render.RestoreJob(s, c, render.BackupSource{Claim: "backups", Path: b.BackupPath()}, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(restore.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "-max-mib-per-second 20 ") {
		t.Errorf("a restore at 20 MiB/s: args %q", args)
	}
}

// TestDataPathJobsConnectAsWhoTheSpecSays: in mode jwt a Backup or a
// restore connects as the NatsUser it names, from that user's creds
// Secret; without one it is refused, as a NatsUser is on a cluster of
// another mode. A cluster that verifies client certificates gets the
// client listener's certificate presented, mounted as its two keys (the
// user's Secret may hold more). Careless variants watched failing: the
// client certificate left out (the Job could not pass verify), and its
// Secret mounted whole.
func TestDataPathJobsConnectAsWhoTheSpecSays(t *testing.T) {
	secretsOf := func(job *batchv1.Job) map[string]string {
		out := map[string]string{}
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				out[v.Secret.SecretName] = keysOf(v.Secret.Items)
			}
		}
		return out
	}
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "shop"}, Spec: v1alpha1.NatsUserSpec{Account: "orders"}}
	jwt := cluster(withAuthMode(v1alpha1.AuthJWT))
	jwt.Namespace = "shop"
	job, err := render.BackupJob(backupOf(jwt), jwt, user, "img")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"-creds /etc/kubenats/credentials/user.creds", "-tls-ca /etc/kubenats/credentials/ca.crt"} {
		if !strings.Contains(args, want) {
			t.Errorf("mode jwt as a NatsUser: args %q lack %q", args, want)
		}
	}
	if got := secretsOf(job); len(got) != 1 || got["backup-nats-creds"] != "" {
		t.Errorf("mode jwt as a NatsUser mounts %v, want the user's Secret backup-nats-creds alone", got)
	}
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}, Spec: v1alpha1.StreamSpec{Name: "ORDERS"}}
	if restore, err := render.RestoreJob(s, jwt, render.BackupSource{Claim: "backups", Path: "backups/x"}, user, "img"); err != nil ||
		!strings.Contains(strings.Join(restore.Spec.Template.Spec.Containers[0].Args, " "), "-creds /etc/kubenats/credentials/user.creds") {
		t.Errorf("a restore as a NatsUser: %v", err)
	}
	if _, err := render.BackupJob(backupOf(jwt), jwt, nil, "img"); err == nil || !strings.Contains(err.Error(), "name a NatsUser") {
		t.Errorf("mode jwt without a user: %v", err)
	}
	users := cluster(withCredentials)
	if _, err := render.BackupJob(backupOf(users), users, user, "img"); err == nil || !strings.Contains(err.Error(), "leave the user out") {
		t.Errorf("a NatsUser on a cluster of mode users: %v", err)
	}

	verifying := cluster(withCredentials, func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "client-tls", Verify: true}
	})
	job = mustBackupJob(t, verifying)
	args = strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"-tls-cert /etc/kubenats/client-certificate/tls.crt", "-tls-key /etc/kubenats/client-certificate/tls.key"} {
		if !strings.Contains(args, want) {
			t.Errorf("a cluster verifying clients: args %q lack %q", args, want)
		}
	}
	if got := secretsOf(job)["client-tls"]; got != "tls.crt,tls.key" {
		t.Errorf("a cluster verifying clients: the client certificate's Secret mounted as %q", got)
	}
	if got := secretsOf(mustBackupJob(t, users)); got["client-tls"] != "" || strings.Contains(strings.Join(mustBackupJob(t, users).Spec.Template.Spec.Containers[0].Args, " "), "-tls-cert") {
		t.Errorf("a cluster not verifying clients gets a client certificate: %v", got)
	}
}

func mustBackupJob(t *testing.T, c *v1alpha1.NatsCluster) *batchv1.Job {
	t.Helper()
	job, err := render.BackupJob(backupOf(c), c, nil, "img")
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// TestATenantsJobMountsNothingOfTheClustersNamespace: a Backup in a
// tenant's namespace of a cluster elsewhere runs in the tenant's
// namespace, dials the cluster's Service there, and mounts only the
// tenant's NatsUser Secret; without a user, or against a cluster that
// verifies client certificates (whose certificate stays with it), it is
// refused with a reason. Careless variant watched failing: the identity
// chosen without the namespaces (the cluster's credentials and client
// certificate Secrets named in the tenant's pod, which would not start,
// and would be another tenant's doing if it did).
func TestATenantsJobMountsNothingOfTheClustersNamespace(t *testing.T) {
	platform := cluster(withAuthMode(v1alpha1.AuthJWT), withCredentials)
	platform.Namespace = "platform"
	b := backupOf(platform)
	b.Namespace, b.Spec.ClusterNamespace, b.Spec.User = "team", "platform", "backup"
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "team"}, Spec: v1alpha1.NatsUserSpec{Account: "orders"}}
	job, err := render.BackupJob(b, platform, user, "img")
	if err != nil {
		t.Fatal(err)
	}
	if job.Namespace != "team" {
		t.Errorf("the Job runs in %q, want the Backup's namespace", job.Namespace)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if want := "-server tls://" + platform.InternalHost() + ":"; !strings.Contains(args, want) || !strings.Contains(platform.InternalHost(), ".platform.") {
		t.Errorf("args %q do not dial the cluster's namespace (%s)", args, want)
	}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName != user.CredentialsSecretName() {
			t.Errorf("the tenant's Job mounts Secret %s, want only its user's %s", v.Secret.SecretName, user.CredentialsSecretName())
		}
	}
	if _, err := render.BackupJob(b, platform, nil, "img"); err == nil || !strings.Contains(err.Error(), "another namespace") {
		t.Errorf("without a user: %v", err)
	}
	platform.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "client-tls", Verify: true}
	if _, err := render.BackupJob(b, platform, user, "img"); err == nil || !strings.Contains(err.Error(), "verifies client certificates") {
		t.Errorf("a cluster verifying clients: %v", err)
	}
}
