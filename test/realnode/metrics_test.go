package realnode_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/test/poll"
)

// The operator's metrics endpoint on the real node, scraped as Prometheus
// does: with a ServiceAccount's token, bound to the install's
// kubenats-metrics-reader ClusterRole, it answers with the operator's
// series; with a token of a ServiceAccount without that binding it
// answers 403, with none 401. The operator asks the API server
// (TokenReview, SubjectAccessReview) from inside its pod, under the
// install's own RBAC. The install's default certificate is the
// operator's self-signed one, so the scrape does not verify it (as the
// install's ServiceMonitor without metrics.tls); the cert-manager-issued
// one is verified in test/loopback. Careless variant seen failing: the
// metrics served without the authentication filter (the scrape without a
// token got 200).
func TestMetricsScrapedWithAServiceAccountToken(t *testing.T) {
	needNode(t)
	pod := waitOperator(t)
	ns := namespace(t)
	reader := serviceAccountToken(t, ns, "scraper")
	stranger := serviceAccountToken(t, ns, "stranger")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubenats-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	}
	if err := node.Client.Create(ctxOf(t), binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Client.Delete(ctxOf(t), binding) })
	url := "https://" + net.JoinHostPort(pod.Status.PodIP, "8443") + "/metrics"
	// The binding reaches the authorizer's cache within moments.
	poll.Until(t, wait, func() error {
		code, body, err := scrape(url, reader)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "controller_runtime_reconcile_total") {
			return fmt.Errorf("a scrape with the reader's token: %d %.200q", code, body)
		}
		return nil
	})
	for _, tc := range []struct {
		who, token string
		want       int
	}{{"a ServiceAccount without the binding", stranger, http.StatusForbidden}, {"no token", "", http.StatusUnauthorized}} {
		code, body, err := scrape(url, tc.token)
		if err != nil || code != tc.want {
			t.Errorf("a scrape with %s: %d %.200q (%v), want %d", tc.who, code, body, err, tc.want)
		}
	}
}

// serviceAccountToken makes a ServiceAccount in ns and returns a token of
// it, as the kubelet would project one.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := node.Client.Create(ctxOf(t), sa); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := node.Client.SubResource("token").Create(ctxOf(t), sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// scrape GETs url with token as a bearer (none when empty).
func scrape(url, token string) (int, string, error) {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // the install's self-signed certificate, see above
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(body), err
}
