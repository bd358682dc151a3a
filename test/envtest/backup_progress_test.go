package envtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/backupreport"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// TestBackupProgressIsReadFromItsRunningPod: while a Backup's Job runs,
// its status.progress is what the Job's running pod serves, followed as
// it grows; a pod that only copies the Job's labels is never asked; once
// no pod runs, the progress is gone. There is no kubelet here: the test
// makes the Job's pod object and serves its progress on the pod's
// address itself, as kubenats-backup does in the pod.
//
// Careless variants watched failing: the progress read once and not
// asked again (status stayed at 1 MiB); the pods listed by label alone
// (the lookalike's 999 bytes shown once the Job's own pod ended); the
// progress kept after the pod ended (status still at 3 MiB).
func TestBackupProgressIsReadFromItsRunningPod(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-now"},
		Spec: v1alpha1.BackupSpec{Cluster: "absent", Stream: "ORDERS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}}}
	create(t, b)
	// The Job the operator would have made, controlled by the Backup.
	labels := map[string]string{render.LabelName: "kubenats-backup", render.LabelInstance: b.Name,
		render.LabelComponent: render.BackupComponent, render.LabelManagedBy: render.ManagedBy}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: b.BackupJobName(), Labels: labels},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "backup", Image: "kubenats:test"}}}}},
	}
	if err := controllerOf(job, b); err != nil {
		t.Fatal(err)
	}
	create(t, job)
	// What the Job controller would say of it: one pod active and ready.
	job.Status = batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), StartTime: &metav1.Time{Time: time.Now()}}
	if err := k8s.Status().Update(ctx(t), job); err != nil {
		t.Fatal(err)
	}

	board, ip := progressServer(t)
	board.Set(backupreport.Progress{Stream: "ORDERS", Done: 1 << 20, Total: 8 << 20})
	pod := runningPodOf(t, job, "orders-now-1", ip, true)

	lookalikeBoard, lookalikeIP := progressServer(t)
	lookalikeBoard.Set(backupreport.Progress{Stream: "ORDERS", Done: 999, Total: 999})
	runningPodOf(t, job, "lookalike", lookalikeIP, false)

	progressIs := func(done int64) func() error {
		return func() error {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			p := b.Status.Progress
			switch {
			case done < 0 && p != nil:
				return fmt.Errorf("status.progress %+v, want none", p)
			case done < 0:
				return nil
			case p == nil || p.Stream != "ORDERS" || p.DoneBytes != done || p.TotalBytes != 8<<20 || p.ObservedAt.IsZero():
				return fmt.Errorf("status.progress %+v (phase %s), want %d of %d bytes of ORDERS", p, b.Status.Phase, done, 8<<20)
			}
			return nil
		}
	}
	eventually(t, wait, progressIs(1<<20))
	if b.Status.Phase != v1alpha1.BackupRunning {
		t.Fatalf("phase %s while the Job's pod runs", b.Status.Phase)
	}
	board.Set(backupreport.Progress{Stream: "ORDERS", Done: 3 << 20, Total: 8 << 20})
	eventually(t, wait, progressIs(3<<20))
	poll.Holds(t, 6*time.Second, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if p := b.Status.Progress; p == nil || p.DoneBytes == 999 {
			return fmt.Errorf("status.progress %+v: the lookalike pod's, or none", p)
		}
		return nil
	})

	// The pod ends (the Job has not said so yet): no progress to show.
	pod.Status.Phase = corev1.PodFailed
	if err := k8s.Status().Update(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, progressIs(-1))
}

// controllerOf makes owner obj's controller.
func controllerOf(obj, owner client.Object) error {
	gvk, err := k8s.GroupVersionKindFor(owner)
	if err != nil {
		return err
	}
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
	return nil
}

// runningPodOf makes a pod with job's labels, Running at ip: job's own
// when controlled, else a lookalike anyone who may make pods could make.
func runningPodOf(t *testing.T, job *batchv1.Job, name, ip string, controlled bool) *corev1.Pod {
	t.Helper()
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name, Labels: job.Spec.Template.Labels},
		Spec: job.Spec.Template.Spec}
	if controlled {
		if err := controllerOf(pod, job); err != nil {
			t.Fatal(err)
		}
	}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}
	if err := k8s.Status().Update(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// progressServer serves a progress board on the progress port of a
// loopback address of its own, as a Job's pod does on its address.
func progressServer(t *testing.T) (*backupreport.ProgressBoard, string) {
	t.Helper()
	for range 20 {
		ip := fmt.Sprintf("127.%d.%d.%d", 100+os.Getpid()%100, rand.IntN(250)+1, rand.IntN(250)+1)
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(backupreport.ProgressPort)))
		if err != nil {
			continue
		}
		board := &backupreport.ProgressBoard{}
		c, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go backupreport.ServeProgress(c, ln, board)
		return board, ip
	}
	t.Fatal("no loopback address with the progress port free")
	return nil, ""
}
