package kubectlplugin

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// WriteStatus prints what c says, for a person: the cluster's phase and
// version, every condition, each server, when the certificates expire,
// and the JetStream resources that name it with their Raft groups.
func WriteStatus(w io.Writer, c *Cluster, now time.Time) error {
	nc := &c.NatsCluster
	st := nc.Status
	fmt.Fprintf(w, "NatsCluster %s/%s: %s, %d of %d servers ready, nats-server %s", nc.Namespace, nc.Name,
		orDash(string(st.Phase)), st.ReadyReplicas, nc.Spec.ReplicaCount(), orDash(st.ServerVersion))
	if st.ServerVersionSource != "" {
		fmt.Fprintf(w, " (%s)", st.ServerVersionSource)
	}
	fmt.Fprintln(w)
	if nc.Generation != st.ObservedGeneration {
		fmt.Fprintf(w, "  the operator has not seen the latest spec yet (generation %d, observed %d)\n", nc.Generation, st.ObservedGeneration)
	}
	if nc.Annotations[v1alpha1.AnnotationPauseReconciliation] == "true" {
		fmt.Fprintf(w, "  paused: the operator makes no change (kubectl kubenats resume natscluster %s)\n", nc.Name)
	}
	if st.Endpoint.Internal != "" {
		fmt.Fprintf(w, "  clients: %s", st.Endpoint.Internal)
		if st.Endpoint.External != "" {
			fmt.Fprintf(w, ", %s", st.Endpoint.External)
		}
		fmt.Fprintln(w)
	}
	if st.MetaLeader != "" {
		fmt.Fprintf(w, "  JetStream meta leader: %s\n", st.MetaLeader)
	}
	if len(st.Zones) > 0 {
		var zones []string
		for _, z := range st.Zones {
			zones = append(zones, fmt.Sprintf("%s: %s", orDash(z.Zone), strings.Join(z.Servers, " ")))
		}
		fmt.Fprintf(w, "  zones: %s\n", strings.Join(zones, "; "))
	}
	if r := st.Carried; r != nil {
		if r.StepDown != "" {
			fmt.Fprintf(w, "  last step-down carried out: %s\n", r.StepDown)
		}
		if r.Evacuate != "" {
			fmt.Fprintf(w, "  last evacuation carried out: %s\n", r.Evacuate)
		}
	}
	if len(st.Leaders) > 0 {
		var counts []string
		for _, l := range st.Leaders {
			counts = append(counts, fmt.Sprintf("%s %d", l.Server, l.Groups))
		}
		fmt.Fprintf(w, "  leaders: %s\n", strings.Join(counts, ", "))
	}
	if exp := st.CertificatesExpiry; exp != nil {
		fmt.Fprintf(w, "  certificates: the first expires %s (in %s)\n", exp.UTC().Format(time.RFC3339), humanDuration(exp.Sub(now)))
	}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCONDITION\tSTATUS\tREASON\tSINCE\tMESSAGE")
	for _, cond := range st.Conditions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cond.Type, cond.Status, cond.Reason, since(cond.LastTransitionTime, now), oneLine(cond.Message))
	}
	fmt.Fprintln(tw, "\nSERVER\tREADY\tVERSION\tRESTARTS\tNODE\tAGE\tCONFIG")
	for i := range c.Pods {
		p := &c.Pods[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, readyWord(p), orDash(p.Labels[render.LabelVersion]),
			restarts(p), orDash(p.Spec.NodeName), since(p.CreationTimestamp, now), orDash(shortHash(p.Annotations[render.AnnotationConfigHash])))
	}
	if len(c.JetStream) > 0 {
		fmt.Fprintln(tw, "\nKIND\tRESOURCE\tREADY\tREASON\tLEADER\tREPLICAS")
		for _, r := range c.JetStream {
			ready := meta.FindStatusCondition(r.Status.Conditions, v1alpha1.ConditionReady)
			status, reason := "Unknown", "-"
			if ready != nil {
				status, reason = string(ready.Status), ready.Reason
			}
			leader, replicas := "-", "-"
			if g := r.Status.Cluster; g != nil {
				leader = orDash(g.Leader)
				replicas = replicaWords(g.Replicas)
			}
			fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\n", r.Kind, r.Namespace, r.Name, status, reason, leader, replicas)
		}
	}
	return tw.Flush()
}

// replicaWords lists a Raft group's followers and their state.
func replicaWords(rs []v1alpha1.ReplicaStatus) string {
	if len(rs) == 0 {
		return "-"
	}
	var out []string
	for _, r := range rs {
		state := "current"
		switch {
		case r.Offline:
			state = "offline"
		case !r.Current:
			state = "behind"
		}
		out = append(out, r.Name+" "+state)
	}
	return strings.Join(out, ", ")
}

func readyWord(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return "yes"
		}
	}
	if !p.DeletionTimestamp.IsZero() {
		return "going"
	}
	return "no"
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// since is how long ago t was, "-" for never.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return humanDuration(now.Sub(t.Time))
}

// humanDuration is d in its largest whole unit, as kubectl prints ages.
func humanDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// oneLine keeps a message on its row of the table.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func shortHash(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
