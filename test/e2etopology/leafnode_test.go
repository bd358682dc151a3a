package e2etopology_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// outside is a nats-server outside the cluster, a plain process on a
// loopback address of its own, as at an edge site or a hub elsewhere.
type outside struct {
	ip, log string
	cmd     *exec.Cmd
}

var outsideHost = rand.IntN(200) + 20

func startOutside(t *testing.T, conf string) *outside {
	t.Helper()
	ip := fmt.Sprintf("127.231.%d.%d", os.Getpid()%250+1, outsideHost)
	outsideHost++
	dir := t.TempDir()
	o := &outside{ip: ip, log: filepath.Join(dir, "server.log")}
	path := filepath.Join(dir, "nats.conf")
	text := fmt.Sprintf("host: %q\nhttp: \"%s:8222\"\n%s", ip, ip, strings.ReplaceAll(conf, "$HOST", ip))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(e2ekit.Cluster.RepoRoot(), "bin", "nats-server", v1alpha1.DefaultVersion, "nats-server")
	o.cmd = exec.Command(bin, "-c", path, "-l", o.log)
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = o.cmd.Process.Signal(syscall.SIGINT)
		_ = o.cmd.Wait()
		if t.Failed() {
			body, _ := os.ReadFile(o.log)
			t.Logf("log of %s:\n%s", ip, e2ekit.LastLines(string(body), 40))
		}
	})
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		_, err := o.get("/healthz")
		return err
	})
	return o
}

func (o *outside) get(path string) (string, error) {
	resp, err := http.Get("http://" + o.ip + ":8222" + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func (o *outside) leafs() int {
	body, err := o.get("/leafz")
	if err != nil {
		return -1
	}
	return strings.Count(body, `"name":`)
}

func (o *outside) logged(re *regexp.Regexp) bool {
	body, _ := os.ReadFile(o.log)
	s := bufio.NewScanner(bytes.NewReader(body))
	for s.Scan() {
		if re.MatchString(s.Text()) {
			return true
		}
	}
	return false
}

func wantLeafs(t *testing.T, o *outside, n int) {
	t.Helper()
	e2ekit.Eventually(t, time.Minute, func() error {
		if got := o.leafs(); got != n {
			return fmt.Errorf("%s lists %d leafnodes, want %d", o.ip, got, n)
		}
		return nil
	})
}

// crosses publishes until the subscriber receives: interest crosses a
// leafnode or a gateway a moment after the subscription.
func crosses(t *testing.T, pub, sub *nats.Conn, subject string) {
	t.Helper()
	s, err := sub.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	_ = sub.Flush()
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if err := pub.Publish(subject, []byte(subject)); err != nil {
			return err
		}
		if _, err := s.NextMsg(300 * time.Millisecond); err != nil {
			return fmt.Errorf("%s did not cross: %w", subject, err)
		}
		return nil
	})
}

func userSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		StringData: data,
	}
	if err := e2ekit.Cluster.Client.Create(e2ekit.Ctx(t), s); err != nil {
		t.Fatal(err)
	}
	return s
}

const hubConf = "leafnodes { host: $HOST, port: 7422, authorization { user: edge, password: hubPassw0rd } }\n"

// TestLeafnodes, on one single-server NatsCluster that both accepts
// leafnodes and dials a hub run by the test:
//
//   - a nats-server outside the cluster joins as a leafnode with the user
//     and the password of the generated <name>-leafnodes-auth Secret, and
//     messages cross both ways; one with a wrong password is refused, as
//     the cluster's own server log says;
//   - the cluster dials the hub with the credentials of an opted-in
//     Secret; the remote moved to a second hub in the spec is applied by
//     reload: the same pod (UID), no container restart, the first hub
//     dropped and the second joined.
//
// The careless variants of these steps (the leafnode account dropped,
// the authorization left out, the leafnodes mark left out) were run
// against the process tier, test/topologyproc, which fails for each;
// here the same steps run through the operator and the kubelet.
func TestLeafnodes(t *testing.T) {
	t.Parallel()
	ns := e2ekit.Namespace(t)
	hub1, hub2 := startOutside(t, hubConf), startOutside(t, hubConf)
	userSecret(t, ns, "hub-user", map[string]string{"user": "edge", "password": "hubPassw0rd"})
	remoteTo := func(hub *outside) []v1alpha1.LeafnodeRemote {
		return []v1alpha1.LeafnodeRemote{{Name: "hub", URLs: []string{fmt.Sprintf("nats-leaf://%s:7422", hub.ip)},
			UserSecretRef: &v1alpha1.LocalSecretRef{Name: "hub-user"}}}
	}
	f := e2ekit.FormClusterIn(t, ns, "edge", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}, Remotes: remoteTo(hub1)}
	})
	pod := f.Pods[0]
	wantLeafs(t, hub1, 1)

	// An edge server joins with the generated Secret's credentials.
	auth := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.Cluster.LeafnodeAuthSecretName()}}
	e2ekit.Get(t, auth)
	password := string(auth.Data[render.PasswordKey])
	podIP := f.IP(pod)
	edge := startOutside(t, fmt.Sprintf("leafnodes { remotes: [ { url: %q } ] }\n", fmt.Sprintf("nats-leaf://leaf:%s@%s:7422", password, podIP)))
	app := e2ekit.AppConn(t, f, "app", pod)
	edgeClient, err := e2ekit.Connect(t, "nats://"+edge.ip+":4222")
	if err != nil {
		t.Fatal(err)
	}
	crosses(t, edgeClient, app, "up")
	crosses(t, app, edgeClient, "down")

	// A wrong password is refused by the cluster's server.
	startOutside(t, fmt.Sprintf("leafnodes { remotes: [ { url: %q } ] }\n", fmt.Sprintf("nats-leaf://leaf:wrong%s@%s:7422", password, podIP)))
	refused := regexp.MustCompile(`lid:\d+ - authentication error`)
	e2ekit.Eventually(t, time.Minute, func() error {
		if !refused.MatchString(e2ekit.Cluster.ServerLog(ns, pod)) {
			return errors.New("the server's log has no leafnode authentication error")
		}
		return nil
	})

	// The remote moves to hub2 by reload.
	before := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}}
	e2ekit.Get(t, before)
	c := f.Cluster.DeepCopy()
	e2ekit.Get(t, c)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Leafnodes.Remotes = remoteTo(hub2)
	if err := e2ekit.Cluster.Client.Patch(e2ekit.Ctx(t), c, patch); err != nil {
		t.Fatal(err)
	}
	wantLeafs(t, hub2, 1)
	wantLeafs(t, hub1, 0)
	after := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}}
	e2ekit.Get(t, after)
	if after.UID != before.UID {
		t.Fatal("the pod was replaced for a remote change")
	}
	if st := e2ekit.NatsStatus(after); st == nil || st.RestartCount != 0 {
		t.Fatalf("the server restarted: %+v", st)
	}
}
