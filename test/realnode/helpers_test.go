package realnode_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/realnode"
	"github.com/kubenats/kubenats/test/testns"
)

const (
	formTimeout = 4 * time.Minute
	wait        = time.Minute
)

// needNode fails a test on a machine that cannot run the real node: a
// skipped proof proves nothing, and make test runs where the node can.
func needNode(t *testing.T) {
	t.Helper()
	if unusable != "" {
		t.Fatal("this machine cannot run the real node: " + unusable)
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// namespace makes a namespace for one test; at its end the namespace is
// deleted and the test waits for its pods to be gone, so that the next
// test has the node's CPU to itself.
func namespace(t *testing.T) string {
	t.Helper()
	name := testns.Name(t)
	if err := node.Client.Create(ctxOf(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = node.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		_ = waitFor(ctx, 2*time.Minute, func() error {
			pods := &corev1.PodList{}
			if err := node.Client.List(ctx, pods, client.InNamespace(name)); err != nil {
				return err
			}
			if len(pods.Items) > 0 {
				return fmt.Errorf("%d pods left", len(pods.Items))
			}
			return nil
		})
	})
	return name
}

// waitOperator waits for the operator's Deployment to be available.
func waitOperator(t *testing.T) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	poll.Until(t, 3*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := node.Client.List(ctxOf(t), pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"app.kubernetes.io/name": "kubenats"}); err != nil {
			return err
		}
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				pod = &pods.Items[i]
				return nil
			}
		}
		return fmt.Errorf("no Ready operator pod among %s", describePods(pods.Items))
	})
	return pod
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyAfter is how long pod p took from its creation to Ready.
func readyAfter(p *corev1.Pod) time.Duration {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Sub(p.CreationTimestamp.Time)
		}
	}
	return -1
}

func describePods(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		var states []string
		for _, s := range p.Status.ContainerStatuses {
			switch {
			case s.State.Waiting != nil:
				states = append(states, s.Name+" waiting "+s.State.Waiting.Reason+" "+s.State.Waiting.Message)
			case s.State.Terminated != nil:
				states = append(states, s.Name+" terminated "+s.State.Terminated.Reason)
			case s.State.Running != nil:
				states = append(states, fmt.Sprintf("%s running ready=%v restarts=%d", s.Name, s.Ready, s.RestartCount))
			}
		}
		out = append(out, fmt.Sprintf("%s (%s; %s)", p.Name, p.Status.Phase, strings.Join(states, ", ")))
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, "; ")
}

// formCluster creates a NatsCluster and waits for it to be Ready with all
// its servers, logging each pod's create-to-Ready.
func formCluster(t *testing.T, ns, name string, edit func(*v1alpha1.NatsClusterSpec)) *v1alpha1.NatsCluster {
	t.Helper()
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if edit != nil {
		edit(&c.Spec)
	}
	if err := node.Client.Create(ctxOf(t), c); err != nil {
		t.Fatal(err)
	}
	return waitClusterReady(t, c, func([]corev1.Pod) error { return nil })
}

// waitClusterReady waits for c to be Ready for its current generation,
// all its servers Ready and more passes (nil: none).
func waitClusterReady(t *testing.T, c *v1alpha1.NatsCluster, more func([]corev1.Pod) error) *v1alpha1.NatsCluster {
	t.Helper()
	began := time.Now()
	var pods []corev1.Pod
	poll.Until(t, formTimeout, func() error {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		list := &corev1.PodList{}
		if err := node.Client.List(ctxOf(t), list, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
			return err
		}
		pods = list.Items
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != c.Generation || c.Status.ObservedGeneration != c.Generation {
			return fmt.Errorf("NatsCluster %s not Ready (%+v); pods: %s", c.Name, ready, describePods(pods))
		}
		if int32(len(pods)) != c.Spec.ReplicaCount() {
			return fmt.Errorf("%d pods, want %d", len(pods), c.Spec.ReplicaCount())
		}
		for i := range pods {
			if !podReady(&pods[i]) {
				return fmt.Errorf("pod %s not Ready: %s", pods[i].Name, describePods(pods))
			}
		}
		return more(pods)
	})
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var times []string
	for i := range pods {
		times = append(times, fmt.Sprintf("%s %s", pods[i].Name, readyAfter(&pods[i]).Round(10*time.Millisecond)))
	}
	t.Logf("NatsCluster %s/%s Ready after %s; pods created to Ready: %s", c.Namespace, c.Name, time.Since(began).Round(100*time.Millisecond), strings.Join(times, ", "))
	return c
}

// clientConn connects as an application in the cluster would: the client
// Service's DNS name, resolved by the cluster's DNS server to the
// Service's ClusterIP (reached through kube-proxy's rules), TLS verifying
// the server under that name against the credentials Secret's ca.crt, and
// the Secret's credentials. It checks that the name did resolve to the
// ClusterIP.
// serviceAnswerTimeout bounds the wait for a new Service to reach its
// ready pods through kube-proxy.
const serviceAnswerTimeout = 30 * time.Second

func clientConn(t *testing.T, c *v1alpha1.NatsCluster, opts ...nats.Option) *nats.Conn {
	t.Helper()
	host := fmt.Sprintf("%s.%s.svc.cluster.local", c.ClientServiceName(), c.Namespace)
	svc := &corev1.Service{}
	if err := node.Client.Get(ctxOf(t), client.ObjectKey{Namespace: c.Namespace, Name: c.ClientServiceName()}, svc); err != nil {
		t.Fatal(err)
	}
	addrs, err := realnode.Resolver().LookupHost(ctxOf(t), host)
	if err != nil || len(addrs) != 1 || addrs[0] != svc.Spec.ClusterIP {
		t.Fatalf("cluster DNS: %s is %v (%v), want the Service's ClusterIP %s", host, addrs, err, svc.Spec.ClusterIP)
	}
	secret := &corev1.Secret{}
	if err := node.Client.Get(ctxOf(t), client.ObjectKey{Namespace: c.Namespace, Name: c.Name + "-client"}, secret); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatal("the credentials Secret has no usable ca.crt")
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Resolver: realnode.Resolver()}
	all := []nats.Option{
		nats.Name(t.Name()),
		nats.SetCustomDialer(dialer),
		nats.Secure(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
	}
	if tok := string(secret.Data["token"]); tok != "" {
		all = append(all, nats.Token(tok))
	} else {
		all = append(all, nats.UserInfo(string(secret.Data["user"]), string(secret.Data["password"])))
	}
	// Ready pods are in the Service's EndpointSlice at once, in kube-proxy's
	// rules a sync later: the client dials until the Service answers.
	var nc *nats.Conn
	poll.Until(t, serviceAnswerTimeout, func() error {
		var err error
		nc, err = nats.Connect("tls://"+net.JoinHostPort(host, "4222"), append(all, opts...)...)
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", host, err)
		}
		return nil
	})
	t.Cleanup(nc.Close)
	return nc
}

// procStatus is /proc/<pid>/status as a map.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// rootReadOnly reports whether the root mount of pid's mount namespace is
// read-only.
func rootReadOnly(t *testing.T, pid int) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			for _, o := range strings.Split(f[5], ",") {
				if o == "ro" {
					return true
				}
			}
			return false
		}
	}
	t.Fatalf("process %d has no root mount", pid)
	return false
}

// environ is pid's environment variable name.
func environ(t *testing.T, pid int, name string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// checkHardened reads from the kernel what the pod's securityContext asked
// for: the user and group, no capability at all, a seccomp filter, no new
// privileges, a read-only root.
func checkHardened(t *testing.T, pid int, what string) {
	t.Helper()
	st := procStatus(t, pid)
	for _, k := range []string{"Uid", "Gid"} {
		for _, id := range strings.Fields(st[k]) {
			if id != strconv.Itoa(render.RunAsUser) {
				t.Errorf("%s: %s %q, want %d throughout", what, k, st[k], render.RunAsUser)
				break
			}
		}
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if st[k] != "0000000000000000" {
			t.Errorf("%s: %s %s, want no capabilities", what, k, st[k])
		}
	}
	if st["Seccomp"] != "2" {
		t.Errorf("%s: Seccomp %s, want 2 (a filter)", what, st["Seccomp"])
	}
	if st["NoNewPrivs"] != "1" {
		t.Errorf("%s: NoNewPrivs %s, want 1", what, st["NoNewPrivs"])
	}
	if !rootReadOnly(t, pid) {
		t.Errorf("%s: the root filesystem is writable", what)
	}
}
