package e2emetrics_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/promserver"
)

// How the test's Prometheus servers are timed: a scrape every 2 s and
// rules evaluated every second, where a real one scrapes every 30 s (the
// PodMonitor's default) and evaluates every minute. Only the timing is
// the test's own: the jobs are translated from the PodMonitors render
// makes, and the rules are config/prometheus/rules.yaml with the `for` of
// the alerts under test shortened (promserver.RuleFile).
const (
	promScrape     = 2 * time.Second
	promEvaluation = time.Second
	// downFor and storageFor replace NatsServerDown's 2m and
	// NatsJetStreamStorageHigh's 10m.
	downFor    = 10 * time.Second
	storageFor = 10 * time.Second
)

// monitored is a NatsCluster with monitoring on: what render.PodMonitor
// selects.
func monitored(claim string) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true}
		if claim != "" {
			size := resource.MustParse(claim)
			s.JetStream.FileStore.Size = &size
		}
	}
}

// scrapeJobs are the jobs of the PodMonitors render makes for clusters,
// found through kubeconfig.
func scrapeJobs(t *testing.T, kubeconfig string, clusters ...*v1alpha1.NatsCluster) []promserver.ScrapeConfig {
	t.Helper()
	var jobs []promserver.ScrapeConfig
	for _, c := range clusters {
		job, err := promserver.PodMonitorJob(render.PodMonitor(c), promserver.Discovery{Kubeconfig: kubeconfig, Interval: promScrape})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// startPrometheus runs a Prometheus named name with jobs and, when rules
// is set, the shipped rules shortened for the test. Its files live in the
// cluster's directory (kept when the test fails).
func startPrometheus(t *testing.T, name string, jobs []promserver.ScrapeConfig, withRules bool) *promserver.Server {
	t.Helper()
	var rules []byte
	if withRules {
		manifest, err := os.ReadFile(filepath.Join(cluster.RepoRoot(), "config", "prometheus", "rules.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rules, err = promserver.RuleFile(manifest, promserver.Shortened{Evaluation: promEvaluation,
			For: map[string]time.Duration{"NatsServerDown": downFor, "NatsJetStreamStorageHigh": storageFor}})
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := promserver.Config{
		Global:        promserver.Global{ScrapeInterval: promScrape.String(), ScrapeTimeout: promScrape.String(), EvaluationInterval: promEvaluation.String()},
		ScrapeConfigs: jobs,
	}
	dir := filepath.Join(cluster.Dir, "prometheus", name)
	return promserver.Start(t, promserver.Binary(cluster.RepoRoot()), dir, cfg, rules)
}

// adminKubeconfig lets a Prometheus discover pods anywhere.
func adminKubeconfig(t *testing.T) string {
	t.Helper()
	path, err := cluster.UserKubeconfig("prometheus-admin", "e2e:prometheus-admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// readerKubeconfig is a ServiceAccount of ns, allowed by a Role to list
// and watch the pods of ns and nothing else, as its own token (a
// TokenRequest, as a projected token volume holds): a team's Prometheus.
func readerKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	ctx := e2ekit.Ctx(t)
	const name = "prometheus-reader"
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}},
	}
	for _, o := range objs {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cluster.Kubernetes.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["loopback"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "loopback", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(cluster.Dir, "prometheus", name+"-"+ns+".kubeconfig")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// promOne is the one series q answers now, or an error naming how many
// it had: a series counted once per replica shows here as three.
func promOne(ctx context.Context, p *promserver.Server, q string) (float64, error) {
	got, err := p.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(got) != 1 {
		return 0, fmt.Errorf("%s: %d series, want exactly one: %v", q, len(got), got)
	}
	return got[0].Value, nil
}

// firing is the alert named alert with the given labels that is firing
// now, nil when none is.
func firing(ctx context.Context, p *promserver.Server, alert string, labels map[string]string) (*promserver.Alert, error) {
	alerts, err := p.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	for i, a := range alerts {
		if a.Labels["alertname"] != alert || a.State != "firing" {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && a.Labels[k] == v
		}
		if match {
			return &alerts[i], nil
		}
	}
	return nil, nil
}

// active is like firing, for an alert pending or firing.
func active(ctx context.Context, p *promserver.Server, alert string, labels map[string]string) (bool, error) {
	alerts, err := p.Alerts(ctx)
	if err != nil {
		return false, err
	}
	for _, a := range alerts {
		match := a.Labels["alertname"] == alert
		for k, v := range labels {
			match = match && a.Labels[k] == v
		}
		if match {
			return true, nil
		}
	}
	return false, nil
}
