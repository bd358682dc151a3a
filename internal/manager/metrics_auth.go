package manager

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics endpoint's check of its callers, as kube-rbac-proxy makes
// it: the API server says who a bearer token belongs to (TokenReview) and
// whether that user may GET the path asked for (SubjectAccessReview, a
// non-resource request; the kubenats-metrics-reader ClusterRole grants
// /metrics). controller-runtime's own filter does the same through
// k8s.io/apiserver's authenticator and authorizer factories, which link
// CEL, gRPC and OpenTelemetry into the operator: a third of its binary and
// 17 MiB of its resident memory before it does any work.
const (
	// A decision is kept this long, so that a scraper costs the API
	// server two reviews a minute, not two a scrape; a refusal for less,
	// so that a binding just made is seen soon.
	allowedFor = time.Minute
	refusedFor = 10 * time.Second
	// maxDecisions bounds what is kept: far more callers than scrape one
	// operator.
	maxDecisions = 256
	// maxBearer bounds a token: a projected ServiceAccount token is about
	// 1 KiB.
	maxBearer = 16 << 10
	// reviewTimeout bounds one review's round trip.
	reviewTimeout = 10 * time.Second
)

// metricsAuth is the metrics server's FilterProvider.
func metricsAuth(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	r := &callerReview{tokens: authn.TokenReviews(), access: authz.SubjectAccessReviews(), decisions: map[decisionKey]decision{}, now: time.Now}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			code, err := r.check(req)
			if err != nil {
				// The reason, never the token.
				log.Error(err, "cannot review a metrics caller")
			}
			if code != http.StatusOK {
				http.Error(w, http.StatusText(code), code)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

// callerReview asks the API server about callers and remembers its answers.
type callerReview struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface

	mu        sync.Mutex
	decisions map[decisionKey]decision
	now       func() time.Time
}

// decisionKey is a token's digest (the token itself is not kept) and the
// request the decision is for.
type decisionKey struct {
	token      [sha256.Size]byte
	verb, path string
}

type decision struct {
	code  int
	until time.Time
}

// check returns the HTTP status the request gets: 200 to go on, 401 for a
// caller the API server does not know, 403 for one it does not allow, 500
// when a review failed (not remembered).
func (r *callerReview) check(req *http.Request) (int, error) {
	token, ok := bearer(req.Header.Get("Authorization"))
	if !ok {
		return http.StatusUnauthorized, nil
	}
	key := decisionKey{token: sha256.Sum256([]byte(token)), verb: strings.ToLower(req.Method), path: req.URL.Path}
	if code, ok := r.remembered(key); ok {
		return code, nil
	}
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	code, err := r.review(ctx, token, key)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	r.remember(key, code)
	return code, nil
}

func (r *callerReview) review(ctx context.Context, token string, key decisionKey) (int, error) {
	tr, err := r.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := r.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: key.path, Verb: key.verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

func (r *callerReview) remembered(key decisionKey) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.decisions[key]
	if !ok || !r.now().Before(d.until) {
		return 0, false
	}
	return d.code, true
}

func (r *callerReview) remember(key decisionKey, code int) {
	now := r.now()
	ttl := refusedFor
	if code == http.StatusOK {
		ttl = allowedFor
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.decisions) >= maxDecisions {
		for k, d := range r.decisions {
			if !now.Before(d.until) {
				delete(r.decisions, k)
			}
		}
	}
	if len(r.decisions) >= maxDecisions {
		clear(r.decisions) // callers beyond the bound are asked about again
	}
	r.decisions[key] = decision{code: code, until: now.Add(ttl)}
}

// bearer is the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > maxBearer {
		return "", false
	}
	return token, true
}
