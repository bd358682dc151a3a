package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// The backup, restore and removal Jobs' pod: the operator's image running
// its second binary, which links nats-server through natscli's library
// and so is kept out of the operator's own (cmd/kubenats-backup).
const (
	BackupBinary        = "/kubenats-backup"
	BackupContainerName = "backup"
	// BackupComponent labels the Job and its pod. They carry neither the
	// cluster's name label nor its instance: a pod that did would be
	// selected by the cluster's Services, budget and policies.
	BackupComponent = "backup"
	// LabelBackupOf names the NatsCluster a backup pod reads from; the
	// cluster's NetworkPolicy admits pods with it to the client port.
	LabelBackupOf = "kubenats.io/backup-of"

	backupDataMount  = "/backup-volume"
	backupCredsMount = "/etc/kubenats/credentials"
	// backupClientCertMount holds the client certificate a Job presents to
	// a cluster that verifies clients.
	backupClientCertMount = "/etc/kubenats/client-certificate"
	// The object store's keys and CA, from the user's Secrets.
	backupStoreKeysMount = "/etc/kubenats/store-keys"
	backupStoreCAMount   = "/etc/kubenats/store-ca"
	backupTmpMount       = "/tmp"
)

// The memory the backup container gets. A snapshot streams: the server
// sends at most its flow-control window before an acknowledgement, and
// each chunk goes to the claim, or into the object store's one upload
// part, as it arrives, so the live heap is a few MiB over those two
// buffers. GOMEMLIMIT is a quarter under the limit, for the collector to
// act on before the kernel does. (Measured by cmd/kubenats-backup's store
// test in this environment; a lower GOGC cut the peak little and cost a
// 1 GiB backup 60 % more time in collections, BackupThroughput.)
var (
	BackupMemoryLimit   = resource.MustParse("64Mi")
	BackupMemoryRequest = resource.MustParse("32Mi")
	BackupRuntimeEnv    = []corev1.EnvVar{
		{Name: "GOMEMLIMIT", Value: strconv.FormatInt(BackupMemoryLimit.Value()*3/4, 10)},
	}
)

// BackupFailureRetries is how often the Job starts the pod again after a
// failed try (a server that was restarting, a claim not yet attached)
// before the Backup is Failed.
const BackupFailureRetries = 2

// BackupJob is the Job that takes backup b of cluster c with image, as
// user (b's spec.user) when not nil, or an error saying why the operator
// cannot take it for c.
func BackupJob(b *v1alpha1.Backup, c *v1alpha1.NatsCluster, user *v1alpha1.NatsUser, image string) (*batchv1.Job, error) {
	return dataPathJob(c, dataPathRun{
		name: b.BackupJobName(), namespace: b.Namespace, instance: b.Name, image: image,
		args:  takeArgs(b),
		place: backupPlaceOf(b, false).flag("-to"),
		user:  user,
	})
}

func takeArgs(b *v1alpha1.Backup) []string {
	args := []string{"take", "-stream", b.Spec.Stream}
	if b.Spec.Stream == "" {
		args = []string{"take", "-all"}
	}
	return append(args, rateArgs(b.Spec.MaxMiBPerSecond)...)
}

// rateArgs pace a data-path Job at mib MiB per second; none for 0.
func rateArgs(mib int32) []string {
	if mib <= 0 {
		return nil
	}
	return []string{"-max-mib-per-second", strconv.Itoa(int(mib))}
}

// BackupSource is where a restore reads a backup: a directory on a claim,
// or a key in an object store.
type BackupSource struct {
	Claim string
	S3    *v1alpha1.S3Bucket
	// Path is the directory on Claim, or the key in S3's bucket.
	Path string
}

// backupPlaceOf is where backup b is, as its Jobs reach it.
func backupPlaceOf(b *v1alpha1.Backup, readOnly bool) backupPlace {
	if b.Spec.S3 != nil {
		return storePlace(b.Spec.S3, b.Spec.S3.Key(b.Name))
	}
	return claimPlace(b.Spec.VolumeClaim.ClaimName, b.BackupPath(), readOnly)
}

// RestoreJob is the Job that makes stream s on cluster c from the backup
// at from, as user (s's spec.restore.user) when not nil, or an error
// saying why the operator cannot.
func RestoreJob(s *v1alpha1.Stream, c *v1alpha1.NatsCluster, from BackupSource, user *v1alpha1.NatsUser, image string) (*batchv1.Job, error) {
	args := []string{"restore", "-stream", s.Spec.Name}
	if s.Spec.Replicas > 0 {
		args = append(args, "-replicas", strconv.Itoa(s.Spec.Replicas))
	}
	if s.Spec.Restore != nil {
		args = append(args, rateArgs(s.Spec.Restore.MaxMiBPerSecond)...)
	}
	place := claimPlace(from.Claim, from.Path, true)
	if from.S3 != nil {
		place = storePlace(from.S3, from.Path)
	}
	return dataPathJob(c, dataPathRun{
		name: RestoreJobName(s), namespace: s.Namespace, instance: s.Name, image: image, args: args,
		place: place.flag("-from"), user: user,
	})
}

// RestoreJobName is the Job that restores s: restore-<name>, shortened
// with a hash of the whole name where a Job's name would be too long.
func RestoreJobName(s *v1alpha1.Stream) string {
	name := "restore-" + s.Name
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(s.Name))
	return strings.TrimRight(name[:50], "-.") + "-" + hex.EncodeToString(sum[:6])
}

// RemoveJob is the Job that deletes backup b's data, for a schedule's
// retention: it needs the backup's place alone, no cluster.
func RemoveJob(b *v1alpha1.Backup, image string) *batchv1.Job {
	l := map[string]string{
		LabelName:      "kubenats-backup",
		LabelInstance:  b.Name,
		LabelComponent: BackupComponent,
		LabelManagedBy: ManagedBy,
	}
	place := backupPlaceOf(b, false).flag("-dir")
	args := append([]string{"remove", "-report", corev1.TerminationMessagePathDefault}, place.args...)
	return dataPathPod(b.RemoveJobName(), b.Namespace, l, image, args, place.volumes, place.mounts)
}

// backupPlace is how a data-path Job reaches a backup: the flags that
// name it, and the volumes that hold it (a claim) or the keys to it (an
// object store's Secrets).
type backupPlace struct {
	where   string
	args    []string
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

// flag is p with its place given as the command's flag.
func (p backupPlace) flag(name string) backupPlace {
	p.args = append([]string{name, p.where}, p.args...)
	return p
}

func claimPlace(claim, path string, readOnly bool) backupPlace {
	return backupPlace{
		where:   backupDataMount + "/" + path,
		volumes: []corev1.Volume{claimVolume(claim, readOnly)},
		mounts:  []corev1.VolumeMount{{Name: "data", MountPath: backupDataMount, ReadOnly: readOnly}},
	}
}

// storePlace mounts the store's keys (and its CA, when one is named) from
// the user's opted-in Secrets, only the keys kubenats-backup reads.
func storePlace(s *v1alpha1.S3Bucket, key string) backupPlace {
	p := backupPlace{
		where: s.URL(key),
		args:  []string{"-s3-endpoint", s.Endpoint, "-s3-credentials", backupStoreKeysMount},
		volumes: []corev1.Volume{{Name: "store-keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: s.CredentialsSecret, DefaultMode: ptr.To[int32](0o440),
			Items: []corev1.KeyToPath{{Key: StoreAccessKeyKey, Path: StoreAccessKeyKey}, {Key: StoreSecretKeyKey, Path: StoreSecretKeyKey}},
		}}}},
		mounts: []corev1.VolumeMount{{Name: "store-keys", MountPath: backupStoreKeysMount, ReadOnly: true}},
	}
	if s.Region != "" {
		p.args = append(p.args, "-s3-region", s.Region)
	}
	if s.CASecret != "" {
		p.args = append(p.args, "-s3-ca", backupStoreCAMount+"/"+TLSCAKey)
		p.volumes = append(p.volumes, corev1.Volume{Name: "store-ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: s.CASecret, DefaultMode: ptr.To[int32](0o444), Items: []corev1.KeyToPath{{Key: TLSCAKey, Path: TLSCAKey}},
		}}})
		p.mounts = append(p.mounts, corev1.VolumeMount{Name: "store-ca", MountPath: backupStoreCAMount, ReadOnly: true})
	}
	return p
}

// The keys of an object store's credentials Secret.
const (
	StoreAccessKeyKey = "accessKeyID"
	StoreSecretKeyKey = "secretAccessKey"
)

// dataPathRun is one run of kubenats-backup.
type dataPathRun struct {
	name, namespace, instance, image string
	args                             []string
	place                            backupPlace
	// user, when set, is who the Job connects as (mode jwt).
	user *v1alpha1.NatsUser
}

// dataPathJob is the Job that runs kubenats-backup against cluster c. It
// connects as run.user when one is named (mode jwt: a NatsUser's creds,
// from the Secret the operator wrote for it, in the Job's namespace),
// else with c's own client credentials, mounted from c's credentials
// Secret: the Job then lives in c's namespace, so whoever asked for it
// can read either already. Where c
// verifies client certificates, the Job presents c's client listener
// certificate, as the operator does.
func dataPathJob(c *v1alpha1.NatsCluster, run dataPathRun) (*batchv1.Job, error) {
	identity, err := dataPathIdentity(c, run.namespace, run.user)
	if err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, run.args...), run.place.args...),
		"-server", "tls://"+c.InternalHost()+":"+strconv.Itoa(ClientPort),
		"-report", corev1.TerminationMessagePathDefault,
		"-progress-listen", ":"+strconv.Itoa(backupreport.ProgressPort),
	)
	args = append(args, identity.args...)
	if c.Spec.ClientTLS().HandshakeFirst {
		args = append(args, "-tls-handshake-first")
	}
	l := map[string]string{
		LabelName:      "kubenats-backup",
		LabelInstance:  run.instance,
		LabelComponent: BackupComponent,
		LabelManagedBy: ManagedBy,
		LabelBackupOf:  c.Name,
	}
	volumes := append(identity.volumes, run.place.volumes...)
	mounts := append(identity.mounts, run.place.mounts...)
	job := dataPathPod(run.name, run.namespace, l, run.image, args, volumes, mounts)
	// The operator reads the progress here into the status (the pod has
	// no API token to write it); nothing else is served.
	job.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{
		Name: "progress", ContainerPort: backupreport.ProgressPort, Protocol: corev1.ProtocolTCP}}
	return job, nil
}

// dataPathIdentity is what a data-path Job of namespace ns connects to c
// as, and the files it needs for it, each mounted as the one key it reads.
// A Job of another namespace than c's mounts nothing of c's: it connects
// as a NatsUser of its own namespace, and c must not ask for a client
// certificate, which stays with c.
func dataPathIdentity(c *v1alpha1.NatsCluster, ns string, user *v1alpha1.NatsUser) (backupPlace, error) {
	var id backupPlace
	elsewhere := ns != c.Namespace
	switch {
	case elsewhere && c.Spec.ClientTLS().Verify:
		return id, fmt.Errorf("NatsCluster %s/%s verifies client certificates, and its certificate stays in namespace %s: back up from there", c.Namespace, c.Name, c.Namespace)
	case elsewhere && user == nil:
		return id, fmt.Errorf("NatsCluster %s/%s is in another namespace, whose credentials stay there: name a NatsUser of this namespace (user)", c.Namespace, c.Name)
	case user != nil && !c.HasTrust():
		return id, fmt.Errorf("a NatsUser connects to a cluster in auth mode jwt, and NatsCluster %s runs mode %s: leave the user out", c.Name, c.Spec.Auth.Mode)
	case user != nil:
		id = secretFiles("credentials", user.CredentialsSecretName(), backupCredsMount)
		id.args = []string{"-tls-ca", backupCredsMount + "/" + v1alpha1.CredsCAKey, "-creds", backupCredsMount + "/" + v1alpha1.CredsKey}
	case c.HasTrust():
		return id, fmt.Errorf("NatsCluster %s runs auth mode jwt, where there is no cluster-wide user: name a NatsUser of the account (user)", c.Name)
	case c.Status.CredentialsSecretRef == nil:
		return id, fmt.Errorf("NatsCluster %s has no credentials Secret yet", c.Name)
	default:
		id = secretFiles("credentials", c.Status.CredentialsSecretRef.Name, backupCredsMount)
		id.args = []string{"-tls-ca", backupCredsMount + "/" + TLSCAKey}
		switch c.Spec.Auth.Mode {
		case v1alpha1.AuthNone:
		case v1alpha1.AuthToken:
			id.args = append(id.args, "-token-file", backupCredsMount+"/"+CredentialsTokenKey)
		default:
			id.args = append(id.args, "-user-file", backupCredsMount+"/"+CredentialsUserKey,
				"-password-file", backupCredsMount+"/"+CredentialsPasswordKey)
		}
	}
	if c.Spec.ClientTLS().Verify {
		cert := secretFiles("client-certificate", c.ClientTLSSecretName(), backupClientCertMount, TLSCertKey, TLSKeyKey)
		id.volumes, id.mounts = append(id.volumes, cert.volumes...), append(id.mounts, cert.mounts...)
		id.args = append(id.args, "-tls-cert", backupClientCertMount+"/"+TLSCertKey, "-tls-key", backupClientCertMount+"/"+TLSKeyKey)
	}
	return id, nil
}

// secretFiles mounts Secret secret at dir, read-only: the keys given,
// each as the file of its name, and nothing else of it; with no keys, the
// whole Secret (one the operator wrote, all of whose keys the Job may
// read, and whose optional keys must not keep the pod from starting).
func secretFiles(volume, secret, dir string, keys ...string) backupPlace {
	var items []corev1.KeyToPath
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return backupPlace{
		volumes: []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, DefaultMode: ptr.To[int32](0o440), Items: items}}}},
		mounts: []corev1.VolumeMount{{Name: volume, MountPath: dir, ReadOnly: true}},
	}
}

func claimVolume(claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
		ClaimName: claim, ReadOnly: readOnly}}}
}

// dataPathPod is a Job of one hardened, memory-bounded pod running
// kubenats-backup with args, with the volumes given and a small /tmp.
func dataPathPod(name, namespace string, l map[string]string, image string, args []string, volumes []corev1.Volume, mounts []corev1.VolumeMount) *batchv1.Job {
	volumes = append(volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(PidDirSizeLimit)}}})
	mounts = append(mounts, corev1.VolumeMount{Name: "tmp", MountPath: backupTmpMount})
	return &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](BackupFailureRetries),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext:              podSecurityContext(),
					Containers: []corev1.Container{{
						Name:    BackupContainerName,
						Image:   image,
						Command: []string{BackupBinary},
						Args:    args,
						Env:     append([]corev1.EnvVar(nil), BackupRuntimeEnv...),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceMemory: BackupMemoryRequest},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: BackupMemoryLimit},
						},
						// The outcome is the container's termination
						// message: the operator reads it from the pod's
						// status, with no permission for the pod and no
						// log to parse.
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext:          containerSecurityContext(),
						VolumeMounts:             mounts,
					}},
					Volumes: volumes,
				},
			},
		},
	}
}
