package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// leakScanner watches the whole e2e suite for a secret in a place anyone
// with read access to it may see: it learns every password, token and
// private key from the Secrets as they are written, keeps every ConfigMap,
// every status of the operator's kinds and every event as they pass, and
// at the end looks for each secret in all of them and in the operator's
// log.
type leakScanner struct {
	mu      sync.Mutex
	secrets map[string]string // value -> where it came from
	seen    []seenText
	stop    context.CancelFunc
}

type seenText struct{ where, text string }

// publicKeys of Secrets hold nothing secret.
var publicKeys = map[string]bool{"tls.crt": true, "ca.crt": true, "servers": true, "user": true}

// minSecretLen: shorter values (a test's "a") would match by chance.
const minSecretLen = 8

func startLeakScanner(cfg *rest.Config) (*leakScanner, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &leakScanner{secrets: map[string]string{}, stop: cancel}
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
	for _, resource := range []string{"natsclusters", "streams", "consumers", "keyvalues", "objectstores"} {
		gvr := schema.GroupVersionResource{Group: "kubenats.io", Version: "v1alpha1", Resource: resource}
		if err := add(kinds.ForResource(gvr).Informer(), func(obj any) {
			u := obj.(*unstructured.Unstructured)
			s.keep(u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()+" status", u.Object["status"])
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

func (s *leakScanner) learnSecret(obj any) {
	sec := obj.(*corev1.Secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range sec.Data {
		if publicKeys[k] {
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

func (s *leakScanner) keep(where string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, seenText{where, string(b)})
	s.mu.Unlock()
}

// canary names the Secret and ConfigMap TestLeakScannerFindsAPlantedLeak
// plants to prove the scanner finds a leak; the final report leaves them out.
const canary = "leak-canary"

// report stops watching and lists every secret found where it must not
// be, the operator's log (logPath) included; "" when none.
func (s *leakScanner) report(logPath string) string {
	s.stop()
	log, _ := os.ReadFile(logPath)
	return s.find(seenText{"the operator's log", string(log)}, false)
}

// find lists the leaks in what was seen and in extra; the canary's own
// only when canaries is set.
func (s *leakScanner) find(extra seenText, canaries bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	texts := append(slices.Clone(s.seen), extra)
	var leaks []string
	for value, from := range s.secrets {
		if strings.Contains(from, "/"+canary+" ") != canaries {
			continue
		}
		for _, t := range texts {
			if strings.Contains(t.text, value) {
				leaks = append(leaks, fmt.Sprintf("%s appears in %s", from, t.where))
				break
			}
		}
	}
	if len(leaks) == 0 {
		return ""
	}
	return strings.Join(leaks, "\n")
}

// counts says how much was scanned, for the suite's log.
func (s *leakScanner) counts() (secrets, texts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.secrets), len(s.seen)
}

// TestLeakScannerFindsAPlantedLeak: the scan is no test that cannot fail:
// a password written into a ConfigMap is found.
func TestLeakScannerFindsAPlantedLeak(t *testing.T) {
	ns := namespace(t)
	value := fmt.Sprintf("canaryPassword%d", time.Now().UnixNano())
	if err := cluster.Client.Create(testCtx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: canary},
		StringData: map[string]string{"password": value}}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: canary},
		Data: map[string]string{"careless.conf": "password: " + value}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if found := leaks.find(seenText{}, true); !strings.Contains(found, "ConfigMap "+ns+"/"+canary) {
			return fmt.Errorf("the planted leak is not found yet (found %q)", found)
		}
		return nil
	})
}
