package e2emetrics_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/promserver"
)

// operatorScrape is how often the test's Prometheus scrapes the operator:
// a rollout of three servers on the loopback cluster takes 5 to 10 s, and
// each step of servers_pending lasts about a server's restart, so that a
// scrape every 2 s could miss a step that the operator did publish.
const operatorScrape = 500 * time.Millisecond

// operatorJob scrapes the suite's operator as a user's Prometheus would:
// over HTTPS (the operator's certificate is self-signed, as
// controller-runtime makes one when none is mounted), with the token of a
// ServiceAccount bound to the shipped kubenats-metrics-reader ClusterRole,
// which the operator checks with a TokenReview and a SubjectAccessReview.
func operatorJob(t *testing.T) promserver.ScrapeConfig {
	t.Helper()
	if e2ekit.OperatorMetricsAddress == "" {
		t.Fatal("the suite's operator serves no metrics")
	}
	ctx := e2ekit.Ctx(t)
	ns := e2ekit.Namespace(t)
	const name = "prometheus-operator-scraper"
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubenats-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	for _, o := range []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, binding} {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = cluster.Client.Delete(ctx, binding) })
	tr, err := cluster.Kubernetes.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return promserver.ScrapeConfig{JobName: "kubenats-operator", Scheme: "https",
		Authorization:  &promserver.Authorization{CredentialsFile: token},
		TLSConfig:      &promserver.TLSConfig{InsecureSkipVerify: true},
		ScrapeInterval: operatorScrape.String(), ScrapeTimeout: operatorScrape.String(),
		StaticConfigs: []promserver.StaticConfig{{Targets: []string{e2ekit.OperatorMetricsAddress}}}}
}
