package jobs

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// ProgressLook is how often the operator asks a running backup or
// restore how far it has come.
const ProgressLook = 5 * time.Second

// RunningPodIP is the address of the Job's pod that runs now: Running,
// not being deleted, with an address. With several (a retry beside a
// pod the kubelet has not reported ended yet), the newest.
func RunningPodIP(pods []corev1.Pod) (string, bool) {
	var newest *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	if newest == nil {
		return "", false
	}
	return newest.Status.PodIP, true
}

// Progress is how far the Job whose pods these are has come, asked of
// its running pod; prev (the status's last) while the pod cannot say or
// has not begun, nil once no pod runs.
func Progress(ctx context.Context, pods []corev1.Pod, prev *v1alpha1.TransferProgress) *v1alpha1.TransferProgress {
	ip, ok := RunningPodIP(pods)
	if !ok {
		return nil
	}
	p, err := backupreport.FetchProgress(ctx, ip)
	if err != nil || p.Stream == "" {
		// No answer, or a pod that has not begun a stream yet (it
		// serves an empty progress from its start): nothing new to say.
		return prev
	}
	if prev != nil && prev.Stream == p.Stream && prev.DoneBytes == p.Done && prev.TotalBytes == p.Total {
		return prev // unchanged: no status write
	}
	return &v1alpha1.TransferProgress{Stream: p.Stream, DoneBytes: p.Done, TotalBytes: p.Total, ObservedAt: metav1.Now()}
}
