package loopback

import (
	"context"
	"encoding/json"
	"maps"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// registerNode creates the node, Ready, with room for any test's pods.
func registerNode(ctx context.Context, cs kubernetes.Interface, name string, extra map[string]string) error {
	labels := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   runtime.GOOS,
		corev1.LabelArchStable: runtime.GOARCH,
	}
	maps.Copy(labels, extra)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	room := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("1000"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	status := corev1.NodeStatus{
		Capacity:    room,
		Allocatable: room,
		Phase:       corev1.NodeRunning,
		Conditions:  nodeConditions(metav1.Now()),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP},
			{Type: corev1.NodeHostName, Address: name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
			KubeletVersion: "v1.37.2-loopback", ContainerRuntimeVersion: "loopback://1",
		},
	}
	// A patch, not an update: the controller manager's node controllers
	// write to a new node at once, and an update would conflict with them.
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

func nodeConditions(now metav1.Time) []corev1.NodeCondition {
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []corev1.NodeCondition{
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
	}
}

// leaseDuration and renewEvery are the kubelet's own: the node lifecycle
// controller marks a node whose lease goes stale unreachable, and its pods
// are then evicted.
const (
	leaseDuration = 40 * time.Second
	renewEvery    = 10 * time.Second
)

// heartbeat renews the node's lease until ctx ends.
func heartbeat(ctx context.Context, cs kubernetes.Interface, node string, logf func(string, ...any)) {
	leases := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	ticker := time.NewTicker(renewEvery)
	defer ticker.Stop()
	for {
		now := metav1.NewMicroTime(time.Now())
		lease, err := leases.Get(ctx, node, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{
					HolderIdentity:       ptr.To(node),
					LeaseDurationSeconds: ptr.To(int32(leaseDuration.Seconds())),
					RenewTime:            &now,
				},
			}, metav1.CreateOptions{})
		case err == nil:
			lease.Spec.RenewTime = &now
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		}
		if err != nil && ctx.Err() == nil {
			// The namespace appears shortly after the API server starts;
			// the next tick tries again, well within the lease's duration.
			logf("renewing the node lease: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
