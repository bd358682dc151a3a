package render

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// StatefulSet runs the servers. Pods start in parallel: with OrderedReady a
// new JetStream cluster never forms, since pod 0 waits for a quorum that
// only pods 1 and 2 could give. Updates are OnDelete: the StatefulSet's own
// rolling update cannot see Raft groups, so the operator replaces one
// server at a time, the meta leader last, each once the cluster is settled.
func StatefulSet(c *v1alpha1.NatsCluster, in Inputs) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		TypeMeta:   typeMeta("apps/v1", "StatefulSet"),
		ObjectMeta: objectMeta(c, c.StatefulSetName()),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(c.Spec.ReplicaCount()),
			Selector:            &metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
			ServiceName:         c.HeadlessServiceName(),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Template:            podTemplate(c, in),
		},
	}
	if c.Spec.JetStreamEnabled() {
		policy := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		if c.Spec.JetStream.FileStore.PVCRetentionPolicy == v1alpha1.PVCDelete {
			policy = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		}
		sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: policy,
			WhenScaled:  policy,
		}
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{dataClaimTemplate(c)}
	}
	return sts
}

// dataClaimTemplate is written the way the API server stores it (kind, API
// version and volume mode spelled out, no status), so that GitOps tools see
// no difference between this output and the live object.
func dataClaimTemplate(c *v1alpha1.NatsCluster) corev1.PersistentVolumeClaim {
	fs := c.Spec.JetStream.FileStore
	claim := corev1.PersistentVolumeClaim{
		TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
		ObjectMeta: metav1.ObjectMeta{Name: c.DataVolume(), Labels: SelectorLabels(c)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: fs.StorageClassName,
			VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
		},
	}
	if fs.Size != nil {
		claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: *fs.Size}
	}
	return claim
}
