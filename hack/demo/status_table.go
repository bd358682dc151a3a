package main

import (
	"bytes"
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// watchUntilReady prints a kubectl-like table of the namespace whenever it
// changes, until the NatsCluster, the Stream and the Consumer are Ready.
func watchUntilReady(ctx context.Context, c client.Client) error {
	began := time.Now()
	deadline := began.Add(readyTimeout)
	last := ""
	for {
		text, ready, err := statusTable(ctx, c)
		if err != nil {
			return err
		}
		if text != last {
			fmt.Printf("\n--- %.1fs ---\n%s", time.Since(began).Seconds(), text)
			last = text
		}
		if ready {
			say("everything Ready after %.1fs", time.Since(began).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not Ready within %s (operator log in the cluster directory)", readyTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// statusTable is what `kubectl get natsclusters,pods,streams,consumers`
// shows, without the ages (so that it changes only when something
// happened), and whether everything is Ready.
func statusTable(ctx context.Context, c client.Client) (string, bool, error) {
	var clusters v1alpha1.NatsClusterList
	var pods corev1.PodList
	var streams v1alpha1.StreamList
	var consumers v1alpha1.ConsumerList
	for _, l := range []client.ObjectList{&clusters, &pods, &streams, &consumers} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return "", false, err
		}
	}
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
	ready := len(clusters.Items) > 0 && len(streams.Items) > 0 && len(consumers.Items) > 0
	fmt.Fprintln(w, "NATSCLUSTER\tPHASE\tREADY\tREPLICAS\tVERSION\tENDPOINT")
	for _, nc := range clusters.Items {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", nc.Name, nc.Status.Phase, nc.Status.ReadyReplicas,
			nc.Spec.ReplicaCount(), nc.Status.ServerVersion, nc.Status.Endpoint.Internal)
		ready = ready && nc.Status.Phase == v1alpha1.PhaseReady && nc.Status.ObservedGeneration == nc.Generation
	}
	fmt.Fprintln(w, "\nPOD\tREADY\tSTATUS\tRESTARTS\tIP")
	for _, p := range pods.Items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", p.Name, containersReady(&p), podStatus(&p), restarts(&p), p.Status.PodIP)
	}
	fmt.Fprintln(w, "\nSTREAM\tSERVER NAME\tREADY\tREASON")
	for _, s := range streams.Items {
		status, reason, ok := readyOf(s.Status.Conditions)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.Spec.Name, status, reason)
		ready = ready && ok
	}
	fmt.Fprintln(w, "\nCONSUMER\tSTREAM\tDURABLE\tREADY\tREASON")
	for _, k := range consumers.Items {
		status, reason, ok := readyOf(k.Status.Conditions)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.Spec.StreamName, k.Spec.DurableName, status, reason)
		ready = ready && ok
	}
	if err := w.Flush(); err != nil {
		return "", false, err
	}
	return b.String(), ready, nil
}

// readyOf is the Ready condition's status and reason, and whether it is True.
func readyOf(conds []metav1.Condition) (status, reason string, ok bool) {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	if c == nil {
		return "-", "-", false
	}
	return string(c.Status), c.Reason, c.Status == metav1.ConditionTrue
}

func containersReady(p *corev1.Pod) string {
	n := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(p.Spec.Containers))
}

// podStatus is kubectl's STATUS column, roughly: Terminating, the reason a
// container waits, or the phase.
func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return cs.State.Waiting.Reason
		}
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}
