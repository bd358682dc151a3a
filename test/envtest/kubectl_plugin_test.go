package envtest_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/kubectlplugin"
)

// plugin runs `kubectl kubenats args...` against the suite's API server
// as its administrator, in ns unless args name another.
func plugin(t *testing.T, ns string, args ...string) (string, error) {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: kubectlplugin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	connect := func(string, string) (client.Client, string, error) { return c, ns, nil }
	var stdout, stderr bytes.Buffer
	if code := kubectlplugin.Run(context.Background(), args, &stdout, &stderr, connect, "test"); code != 0 {
		return stdout.String(), fmt.Errorf("exit %d: %s", code, stderr.String())
	}
	return stdout.String(), nil
}

// `kubectl kubenats` on a NatsCluster the operator runs: pause asks the
// operator, which says Paused; status shows it, with the conditions;
// resume takes it back; completion offers the cluster by name; the
// report holds the cluster, its objects and the names of its Secrets,
// and not one byte of any Secret's value (every value of every Secret in
// the namespace is looked for in the whole bundle). Careless plugins it
// catches: a report that lists the Secrets as objects (their data in
// objects.yaml, base64 as a Secret's YAML has it: run, every generated
// password and key found; looking for the raw values alone missed them),
// a pause that edits
// the spec instead of the annotation (the operator never says Paused).
func TestKubectlPlugin(t *testing.T) {
	t.Parallel()
	c := oneServerCluster(t)
	waitObserved(t, c)

	if out, err := plugin(t, c.Namespace, "pause", "nc", c.Name); err != nil || !strings.Contains(out, "paused") {
		t.Fatalf("pause: %q %v", out, err)
	}
	eventually(t, wait, func() error {
		get(t, c)
		return pausedCondition(c.Status.Conditions, v1alpha1.ReasonReconciliationPaused)
	})
	status, err := plugin(t, c.Namespace, "status", c.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NatsCluster " + c.Namespace + "/" + c.Name, "paused: the operator makes no change", "Paused", "CONDITION", "SERVER"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if _, err := plugin(t, c.Namespace, "resume", "natscluster", c.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		get(t, c)
		if meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionPaused) != nil {
			return errors.New("still Paused after resume")
		}
		return nil
	})
	if out, err := plugin(t, c.Namespace, "__complete", "status", ""); err != nil || !strings.Contains(out, c.Name+"\n") || !strings.HasSuffix(out, ":4\n") {
		t.Errorf("completion of status: %q %v", out, err)
	}

	report, err := plugin(t, c.Namespace, "report", c.Name)
	if err != nil {
		t.Fatal(err)
	}
	files := untar(t, report)
	for _, name := range []string{"status.txt", "objects.yaml", "events.txt", "jetstream.yaml", "secrets.txt"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the report has no %s", name)
		}
	}
	if !strings.Contains(files["objects.yaml"], "kind: NatsCluster") || !strings.Contains(files["objects.yaml"], "kind: StatefulSet") {
		t.Errorf("objects.yaml lacks the cluster or its StatefulSet")
	}
	var secrets corev1.SecretList
	if err := k8s.List(ctx(t), &secrets, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) == 0 {
		t.Fatal("no Secret in the namespace: the leak check would prove nothing")
	}
	checked := 0
	for _, s := range secrets.Items {
		if !strings.Contains(files["secrets.txt"], s.Name) {
			t.Errorf("secrets.txt does not name %s", s.Name)
		}
		for key, value := range s.Data {
			if len(value) < 8 || publicKeys[key] {
				continue // too short to tell from other text, or public
			}
			checked++
			// As it is, and as a Secret's YAML would carry it.
			for _, form := range []string{string(value), base64.StdEncoding.EncodeToString(value)} {
				for file, text := range files {
					if strings.Contains(text, form) {
						t.Errorf("the report's %s holds the value of %s/%s", file, s.Name, key)
					}
				}
			}
		}
	}
	t.Logf("report: %d files; %d Secret values looked for", len(files), checked)
}

// publicKeys are the keys of kubenats' Secrets that hold nothing secret:
// the servers' URL and certificates, which the status and the objects
// name too.
var publicKeys = map[string]bool{"servers": true, "ca.crt": true, "tls.crt": true}

// untar reads a gzipped tar into its files' contents, by base name.
func untar(t *testing.T, data string) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(hdr.Name, "kubenats-report/")] = string(body)
	}
}

// TestKubectlPluginRequests: stepdown and evacuate set the request
// annotation the operator carries out ("<server>@<time>", new on each
// call), after checking the cluster exists; promote removes a mirror
// Stream's spec.mirror and sets its subjects, and refuses a Stream that
// mirrors nothing; wrong argument counts are usage errors. Careless
// plugins it catches: a request value without the time (a second
// stepdown would equal the first, and the operator carries out a value
// once), a promote that writes the server instead of the Stream.
func TestKubectlPluginRequests(t *testing.T) {
	t.Parallel()
	c := oneServerCluster(t)
	ns := c.Namespace
	if _, err := plugin(t, ns, "evacuate", c.Name); err == nil || !strings.Contains(err.Error(), "exit 2") {
		t.Errorf("evacuate without a server: %v, want a usage error", err)
	}
	if _, err := plugin(t, ns, "stepdown", "no-such-cluster"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("stepdown of a missing cluster: %v, want not found", err)
	}
	var values []string
	for range 2 {
		if _, err := plugin(t, ns, "stepdown", c.Name); err != nil {
			t.Fatal(err)
		}
		get(t, c)
		values = append(values, c.Annotations[v1alpha1.AnnotationStepDown])
	}
	if values[0] == values[1] || !strings.HasPrefix(values[0], "@") {
		t.Errorf("two stepdowns set %q then %q: want two new requests naming no server", values[0], values[1])
	}
	if _, err := plugin(t, ns, "evacuate", c.Name, c.PodName(0)); err != nil {
		t.Fatal(err)
	}
	get(t, c)
	if got := c.Annotations[v1alpha1.AnnotationEvacuate]; v1alpha1.RequestTarget(got) != c.PodName(0) {
		t.Errorf("evacuate set %q, want it to name %s", got, c.PodName(0))
	}

	plain := newStream(ns, "plain", nowhere)
	create(t, plain)
	if _, err := plugin(t, ns, "promote", "plain"); err == nil || !strings.Contains(err.Error(), "mirrors nothing") {
		t.Errorf("promote of a stream that mirrors nothing: %v", err)
	}
	standby := newStream(ns, "standby", nowhere, func(s *v1alpha1.StreamSpec) {
		s.Subjects, s.Mirror = nil, &v1alpha1.StreamSource{Name: "plain"}
	})
	create(t, standby)
	if _, err := plugin(t, ns, "promote", "standby", "--subjects", "standby.>,more.>"); err != nil {
		t.Fatal(err)
	}
	get(t, standby)
	if standby.Spec.Mirror != nil || strings.Join(standby.Spec.Subjects, ",") != "standby.>,more.>" {
		t.Errorf("after promote: mirror %v, subjects %v", standby.Spec.Mirror, standby.Spec.Subjects)
	}
	if out, err := plugin(t, ns, "__complete", "promote", "st"); err != nil || !strings.Contains(out, "standby\n") {
		t.Errorf("completion of promote: %q %v", out, err)
	}
}
