package e2ekit

import (
	"github.com/kubenats/kubenats/internal/render"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// LeakScanner watches the whole e2e suite for a secret in a place anyone
// with read access to it may see: it learns every password, token and
// private key from the Secrets as they are written, keeps every ConfigMap,
// every pod's and StatefulSet's spec, every status of the operator's
// kinds (all of them, as the API server lists them), every event, and the labels and annotations of all of them as
// they pass, and at the end looks for each secret in all of them and in
// the logs of the operator, the servers, cert-manager and Istio's
// injector.
type LeakScanner struct {
	mu      sync.Mutex
	secrets map[string]string // value -> where it came from
	seen    []SeenText
	kept    map[string]struct{} // where and text of each seen, to keep each once
	stop    context.CancelFunc
}

// SeenText is one text the scan looked at, and where it was.
type SeenText struct{ where, text string }

// publicKeys of Secrets hold nothing secret: certificates, addresses, and
// in mode jwt the operator's and the system account's JWTs and public keys
// (the operator's signing keys and the digest of its last rotation request too),
// which nats.conf carries (their seeds are scanned for).
var publicKeys = map[string]bool{"tls.crt": true, "ca.crt": true, "servers": true, "user": true,
	render.TrustOperatorJWTKey: true, render.TrustSystemJWTKey: true, render.TrustSystemPublicKey: true,
	render.TrustOperatorSigningKeysKey: true, render.TrustOperatorPreviousKey: true, render.TrustOperatorRotationKey: true}

// minSecretLen: shorter values (a test's "a") would match by chance.
const minSecretLen = 8

func startLeakScanner(cfg *rest.Config) (*LeakScanner, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &LeakScanner{secrets: map[string]string{}, kept: map[string]struct{}{}, stop: cancel}
	core := informers.NewSharedInformerFactory(cs, 0)
	add := func(inf cache.SharedIndexInformer, fn func(obj any)) error {
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: fn, UpdateFunc: func(_, obj any) { fn(obj) }})
		return err
	}
	if err := add(core.Core().V1().Secrets().Informer(), s.learnSecret); err != nil {
		return nil, err
	}
	if err := add(core.Core().V1().ConfigMaps().Informer(), func(obj any) {
		cm := obj.(*corev1.ConfigMap)
		s.keep("ConfigMap "+cm.Namespace+"/"+cm.Name, cm.Data)
		s.keepMeta("ConfigMap", &cm.ObjectMeta)
	}); err != nil {
		return nil, err
	}
	// A pod's or StatefulSet's spec is readable by anyone who may list
	// them: a password there (an env value instead of a reference) leaks.
	if err := add(core.Core().V1().Pods().Informer(), func(obj any) {
		p := obj.(*corev1.Pod)
		s.keep("pod "+p.Namespace+"/"+p.Name+" spec", p.Spec)
		s.keepMeta("pod", &p.ObjectMeta)
	}); err != nil {
		return nil, err
	}
	if err := add(core.Apps().V1().StatefulSets().Informer(), func(obj any) {
		sts := obj.(*appsv1.StatefulSet)
		s.keep("StatefulSet "+sts.Namespace+"/"+sts.Name+" spec", sts.Spec)
		s.keepMeta("StatefulSet", &sts.ObjectMeta)
	}); err != nil {
		return nil, err
	}
	if err := add(core.Core().V1().Services().Informer(), func(obj any) {
		svc := obj.(*corev1.Service)
		s.keepMeta("Service", &svc.ObjectMeta)
	}); err != nil {
		return nil, err
	}
	if err := add(core.Events().V1().Events().Informer(), func(obj any) {
		e := obj.(*eventsv1.Event)
		s.keep("event "+e.Namespace+"/"+e.Name, e.Note+" "+e.Reason)
	}); err != nil {
		return nil, err
	}
	kinds := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	resources, err := operatorKinds(cs)
	if err != nil {
		return nil, err
	}
	for _, resource := range resources {
		gvr := schema.GroupVersionResource{Group: "kubenats.io", Version: "v1alpha1", Resource: resource}
		if err := add(kinds.ForResource(gvr).Informer(), func(obj any) {
			u := obj.(*unstructured.Unstructured)
			where := u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
			s.keep(where+" status", u.Object["status"])
			s.keep(where+" labels and annotations", []any{u.GetLabels(), u.GetAnnotations()})
		}); err != nil {
			return nil, err
		}
	}
	core.Start(ctx.Done())
	kinds.Start(ctx.Done())
	core.WaitForCacheSync(ctx.Done())
	kinds.WaitForCacheSync(ctx.Done())
	return s, nil
}

// operatorKinds are the resources of every kind the operator serves, as
// the API server lists them: a kind added later (NatsAccount and NatsUser
// were, and their status is where a careless operator would write a
// seed it just made) is scanned without anyone remembering to add it.
func operatorKinds(cs kubernetes.Interface) ([]string, error) {
	list, err := cs.Discovery().ServerResourcesForGroupVersion("kubenats.io/v1alpha1")
	if err != nil {
		return nil, fmt.Errorf("listing the operator's kinds: %w", err)
	}
	var out []string
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") { // not a subresource (status)
			out = append(out, r.Name)
		}
	}
	if !slices.Contains(out, "natsaccounts") || !slices.Contains(out, "natsusers") {
		return nil, fmt.Errorf("the API server serves %v of kubenats.io, without NatsAccount or NatsUser", out)
	}
	return out, nil
}

func (s *LeakScanner) learnSecret(obj any) {
	sec := obj.(*corev1.Secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range sec.Data {
		// A url without credentials (modes none and jwt, a NatsUser's creds
		// Secret) is the servers' address.
		if publicKeys[k] || (k == "url" && !strings.Contains(string(v), "@")) {
			continue
		}
		for _, value := range secretParts(string(v)) {
			s.secrets[value] = fmt.Sprintf("Secret %s/%s key %s", sec.Namespace, sec.Name, k)
		}
	}
}

// secretParts are the strings a leak of value would contain: the value
// itself, or for a PEM private key each line of its body (a log line would
// hold it without its armour).
func secretParts(value string) []string {
	if strings.Contains(value, "NKEY SEED-----") {
		// A creds file: its seed alone is the secret (the JWT is public),
		// and a leak would carry it without the file around it.
		var seeds []string
		for _, line := range strings.Split(value, "\n") {
			if line = strings.TrimSpace(line); len(line) == 58 && line[0] == 'S' {
				seeds = append(seeds, line)
			}
		}
		return seeds
	}
	if !strings.Contains(value, "PRIVATE KEY-----") {
		if len(value) < minSecretLen {
			return nil
		}
		return []string{value}
	}
	var out []string
	for _, line := range strings.Split(value, "\n") {
		if len(line) >= minSecretLen && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

// keepMeta keeps an object's labels and annotations: readable by anyone
// who may list the object, and a place a careless operator might record
// what it generated.
func (s *LeakScanner) keepMeta(kind string, m *metav1.ObjectMeta) {
	s.keep(kind+" "+m.Namespace+"/"+m.Name+" labels and annotations", []any{m.Labels, m.Annotations})
}

// keep records what v says at where, once: pods and StatefulSets pass
// by at every status change with the same spec.
func (s *LeakScanner) keep(where string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	key := where + "\x00" + string(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.kept[key]; dup {
		return
	}
	s.kept[key] = struct{}{}
	s.seen = append(s.seen, SeenText{where, string(b)})
}

// Canary names the Secret and ConfigMap TestLeakScannerFindsAPlantedLeak
// plants to prove the scanner finds a leak; the final report leaves them out.
const Canary = "leak-canary"

// Report stops watching and lists every secret found where it must not
// be, the logs in logDir included; "" when none. A log that cannot be
// read is reported too: a scan that skipped it proves nothing.
func (s *LeakScanner) Report(logDir string) string {
	s.stop()
	logs, err := ScannedLogs(logDir)
	if err != nil {
		return "the logs could not be read, so they were not scanned: " + err.Error()
	}
	return s.Find(logs, false)
}

// ScannedLogs are the logs of the parts that see secrets: the operator's,
// cert-manager's, Istio's injector's and each server's (named
// <namespace>_<pod>_<uid>.log by the loopback kubelet). The control
// plane's and the kubelet's own are the harness's, not the product's.
func ScannedLogs(dir string) ([]SeenText, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []SeenText
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") || slices.Contains([]string{"kubelet.log", "kube-controller-manager.log"}, name) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, SeenText{"the log " + name, string(b)})
	}
	if !slices.ContainsFunc(out, func(t SeenText) bool { return t.where == "the log operator.log" }) {
		return nil, fmt.Errorf("no operator.log in %s", dir)
	}
	return out, nil
}

// LogTexts says how many logs were scanned, for the suite's log.
func LogTexts(dir string) int {
	logs, _ := ScannedLogs(dir)
	return len(logs)
}

// Find lists the leaks in what was seen and in extra; the Canary's own
// only when canaries is set.
func (s *LeakScanner) Find(extra []SeenText, canaries bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	texts := append(slices.Clone(s.seen), extra...)
	// Each text is read once, whatever the number of secrets: every
	// secret is at least minSecretLen long, so a window of that many bytes
	// at each position finds the secrets that may start there.
	byPrefix := map[string][]string{}
	for value, from := range s.secrets {
		if strings.Contains(from, "/"+Canary+" ") == canaries {
			byPrefix[value[:minSecretLen]] = append(byPrefix[value[:minSecretLen]], value)
		}
	}
	found := map[string]string{} // secret -> the first place it appears
	for _, t := range texts {
		for i := 0; i+minSecretLen <= len(t.text); i++ {
			for _, value := range byPrefix[t.text[i:i+minSecretLen]] {
				if _, ok := found[value]; !ok && strings.HasPrefix(t.text[i:], value) {
					found[value] = t.where
				}
			}
		}
	}
	var leaks []string
	for value, where := range found {
		leaks = append(leaks, fmt.Sprintf("%s appears in %s", s.secrets[value], where))
	}
	sort.Strings(leaks)
	if len(leaks) == 0 {
		return ""
	}
	return strings.Join(leaks, "\n")
}

// Counts says how much was scanned, for the suite's log.
func (s *LeakScanner) Counts() (secrets, texts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.secrets), len(s.seen)
}
