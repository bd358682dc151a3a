package loopback

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// istiod's control loops that the mesh model needs: PeerAuthentications
// from the API server become the model's policies, and the mesh root is
// published in every namespace as istio-ca-root-cert (the injected proxy
// mounts it; the pod does not start without it).

// PeerAuthenticationResource is Istio's security.istio.io/v1 kind.
var PeerAuthenticationResource = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}

// istioRootCertConfigMap is what istiod publishes the root in.
const istioRootCertConfigMap = "istio-ca-root-cert"

// runIstioControllers starts both loops; they end with ctx.
func runIstioControllers(ctx context.Context, cfg *rest.Config, mesh *Mesh) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	policies := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	pa := policies.ForResource(PeerAuthenticationResource).Informer()
	sync := func() { mesh.SetPeerAuthentications(peerAuthenticationsOf(pa.GetStore().List(), mesh.logf)) }
	if _, err := pa.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { sync() }, UpdateFunc: func(_, _ any) { sync() }, DeleteFunc: func(any) { sync() },
	}); err != nil {
		return err
	}
	core := informers.NewSharedInformerFactory(cs, 0)
	ns := core.Core().V1().Namespaces().Informer()
	root := string(mesh.ca.rootPEM())
	if _, err := ns.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Namespace); ok {
				publishRootCert(ctx, cs, n.Name, root, mesh.logf)
			}
		},
	}); err != nil {
		return err
	}
	policies.Start(ctx.Done())
	core.Start(ctx.Done())
	for _, ok := range policies.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("istio: the PeerAuthentication cache did not sync")
		}
	}
	for _, ok := range core.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("istio: the Namespace cache did not sync")
		}
	}
	return nil
}

func publishRootCert(ctx context.Context, cs kubernetes.Interface, ns, root string, logf func(string, ...any)) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: istioRootCertConfigMap, Namespace: ns,
		Labels: map[string]string{"istio.io/config": "true"}}, Data: map[string]string{"root-cert.pem": root}}
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
		logf("istio: publishing %s in %s: %v", istioRootCertConfigMap, ns, err)
	}
}

// peerAuthenticationsOf turns Istio's objects into the model's policies,
// oldest first (Istio takes the oldest of several at one level). An object
// the model cannot read is left out, with a log line, as istiod ignores an
// invalid one.
func peerAuthenticationsOf(objs []any, logf func(string, ...any)) []PeerAuthentication {
	var items []*unstructured.Unstructured
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			items = append(items, u)
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].GetCreationTimestamp(), items[j].GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return items[i].GetNamespace()+"/"+items[i].GetName() < items[j].GetNamespace()+"/"+items[j].GetName()
	})
	var out []PeerAuthentication
	for _, u := range items {
		p, err := peerAuthenticationOf(u)
		if err != nil {
			logf("istio: PeerAuthentication %s/%s ignored: %v", u.GetNamespace(), u.GetName(), err)
			continue
		}
		out = append(out, p)
	}
	return out
}

func peerAuthenticationOf(u *unstructured.Unstructured) (PeerAuthentication, error) {
	p := PeerAuthentication{Namespace: u.GetNamespace(), Name: u.GetName()}
	selector, _, err := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	if err != nil {
		return p, err
	}
	p.Selector = selector
	mode, _, err := unstructured.NestedString(u.Object, "spec", "mtls", "mode")
	if err != nil {
		return p, err
	}
	if p.Mode, err = mtlsMode(mode); err != nil {
		return p, err
	}
	ports, _, err := unstructured.NestedMap(u.Object, "spec", "portLevelMtls")
	if err != nil {
		return p, err
	}
	for key, v := range ports {
		port, err := strconv.ParseUint(key, 10, 16)
		if err != nil || port == 0 {
			return p, fmt.Errorf("portLevelMtls key %q is not a port", key)
		}
		m, _ := v.(map[string]any)
		s, _ := m["mode"].(string)
		mode, err := mtlsMode(s)
		if err != nil {
			return p, err
		}
		if p.PortLevel == nil {
			p.PortLevel = map[int32]MTLSMode{}
		}
		p.PortLevel[int32(port)] = mode
	}
	return p, nil
}

func mtlsMode(s string) (MTLSMode, error) {
	switch m := MTLSMode(s); m {
	case "", ModeUnset:
		return ModeUnset, nil
	case ModeDisable, ModePermissive, ModeStrict:
		return m, nil
	}
	return "", fmt.Errorf("unknown mTLS mode %q", s)
}
