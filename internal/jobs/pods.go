// Package jobs reads the Jobs the operator runs its data path in
// (backups and restores): the pods a Job made, whose termination
// messages say how each try ended.
package jobs

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Pods are the pods job made: those its controller reference names, not
// any pod that carries its labels, which anyone who may make pods in the
// namespace can copy.
func Pods(ctx context.Context, r client.Reader, job *batchv1.Job) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return nil, err
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if metav1.IsControlledBy(&p, job) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}
