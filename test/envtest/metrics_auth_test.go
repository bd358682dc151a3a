package envtest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubenats/kubenats/internal/manager"
)

// token is a fresh token of ServiceAccount name in ns.
func token(t *testing.T, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	create(t, sa)
	req := &authenticationv1.TokenRequest{}
	if err := k8s.SubResource("token").Create(ctx(t), sa, req); err != nil {
		t.Fatal(err)
	}
	return req.Status.Token
}

// The metrics endpoint the operator ships answers only callers the API
// server authenticates and allows GET /metrics, the kubenats-metrics-reader
// ClusterRole. It runs as the operator's ServiceAccount, so its own RBAC
// for the reviews it asks for is the shipped one. Careless variants: a
// check that stops at the TokenReview (nobody gets 200), one that reads
// the SubjectAccessReview's Denied alone (nobody gets 200: an RBAC
// authorizer says not Allowed, never Denied).
func TestMetricsNeedAuthenticationAndAuthorization(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	scraper, nobody := token(t, ns, "scraper"), token(t, ns, "nobody")
	create(t, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubenats-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	})

	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	httpClient, err := rest.HTTPClientFor(operatorCfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(manager.MetricsOptions(manager.Options{MetricsBindAddress: addr}), operatorCfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	serving, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(serving) }()
	t.Cleanup(func() { stop(); <-done })

	// The certificate is self-signed: this test checks who may read, not
	// who serves.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(bearer string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body), err
	}
	eventually(t, wait, func() error { _, _, err := get(""); return err }) // listening

	for who, want := range map[string]int{"": http.StatusUnauthorized, nobody: http.StatusForbidden, scraper: http.StatusOK} {
		code, body, err := get(who)
		if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Errorf("GET /metrics answered %d, want %d: %s", code, want, body)
		}
		if code == http.StatusOK && !contains(body, "go_goroutines") {
			t.Errorf("the authorized caller got no metrics: %.200s", body)
		}
	}
	// The operator's own gauges are among them, behind the same check: a
	// cluster's conditions show once the operator has reconciled it.
	// Careless variant watched failing: gauges never registered in
	// controller-runtime's registry (a registry of their own, unserved).
	c := oneServerCluster(t)
	eventually(t, wait, func() error {
		_, body, err := get(scraper)
		if err != nil {
			return err
		}
		want := fmt.Sprintf(`kubenats_natscluster_condition{namespace=%q,natscluster=%q,status="True",type="Ready"}`, c.Namespace, c.Name)
		if !contains(body, want) && !contains(body, fmt.Sprintf(`kubenats_natscluster_servers{namespace=%q,natscluster=%q}`, c.Namespace, c.Name)) {
			return fmt.Errorf("no gauges of %s/%s", c.Namespace, c.Name)
		}
		return nil
	})
	// A token the API server does not know is refused as unauthenticated.
	if code, _, err := get("not-a-token"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d, %v", code, err)
	}
	// Plain HTTP is not served at all.
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the metrics endpoint answers plain HTTP")
		}
	}
}
