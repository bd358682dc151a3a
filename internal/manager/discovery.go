package manager

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// nativeSidecarsSince is the Kubernetes version from which native sidecars
// are stable, the version Istio's injector checks (pkg/kube/inject,
// DetectNativeSidecar).
var nativeSidecarsSince = version.MajorMinor(1, 33)

// nativeSidecars tells, from the API server's version, whether Istio's
// proxy runs as a native sidecar; nil when the version cannot be read, and
// Istio's injector decides.
func nativeSidecars(cfg *rest.Config) *bool {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return nil
	}
	v, err := version.ParseGeneric(info.GitVersion)
	if err != nil {
		return nil
	}
	native := v.AtLeast(nativeSidecarsSince)
	return &native
}

// istioInstalled reports whether the API server serves Istio's
// PeerAuthentication v1 now.
func istioInstalled(cfg *rest.Config) bool {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false
	}
	list, err := dc.ServerResourcesForGroupVersion("security.istio.io/v1")
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Kind == "PeerAuthentication" {
			return true
		}
	}
	return false
}
