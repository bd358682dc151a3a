package natscluster

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/servers"
)

func controlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

func TestMemberPods(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "nats", UID: "sts-uid"}}
	pod := func(name string, owners []metav1.OwnerReference) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	}
	notController := controlledBy("StatefulSet", "nats", "sts-uid")
	notController[0].Controller = nil
	pods := []corev1.Pod{
		pod("nats-0", controlledBy("StatefulSet", "nats", "sts-uid")),
		pod("nats-1", nil), // same labels, no owner: someone's pod
		pod("nats-2", controlledBy("StatefulSet", "nats", "old-uid")),   // a StatefulSet of that name before this one
		pod("nats-3", controlledBy("ReplicaSet", "nats", "sts-uid")),    // a UID that is not a StatefulSet's
		pod("nats-4", notController),                                    // owned, not controlled
		pod("impostor", controlledBy("StatefulSet", "nats", "sts-uid")), // controlled: the StatefulSet's own word
	}
	got := servers.MemberPods(pods, sts)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "nats-0" || names[1] != "impostor" {
		t.Fatalf("members %v, want nats-0 and impostor", names)
	}
	if servers.MemberPods(pods, nil) != nil {
		t.Fatal("pods are members of a StatefulSet that does not exist")
	}
}

func TestMemberClaim(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "nats"}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "nats", UID: "sts-uid"}}
	claim := func(name string, owners []metav1.OwnerReference) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	}
	podOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "nats-1", UID: "p"}}
	tests := []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		want  bool
	}{
		{"retained, no owner", claim("data-nats-0", nil), true},
		{"deleted with the StatefulSet", claim("data-nats-2", controlledBy("StatefulSet", "nats", "sts-uid")), true},
		{"deleted with its pod", claim("data-nats-1", podOwner), true},
		{"another pod's claim name", claim("data-nats-2", podOwner), false},
		{"another StatefulSet's", claim("data-nats-0", controlledBy("StatefulSet", "nats", "other-uid")), false},
		{"another installation's name", claim("data-other-0", nil), false},
		{"not a claim template's name", claim("nats-0", nil), false},
		{"not an ordinal", claim("data-nats-x", nil), false},
		{"owned by something else", claim("data-nats-0", controlledBy("Deployment", "x", "d")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memberClaim(c, tt.claim, sts); got != tt.want {
				t.Fatalf("memberClaim = %v, want %v", got, tt.want)
			}
		})
	}
}
