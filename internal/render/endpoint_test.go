package render_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestInternalEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       *v1alpha1.NatsCluster
		wantHost string
		wantURL  string
	}{
		{"demo in ns", cluster(), "demo.ns.svc", "tls://demo.ns.svc:4222"},
		{"other name and namespace", cluster(named("my-nats"), func(c *v1alpha1.NatsCluster) { c.Namespace = "prod" }),
			"my-nats.prod.svc", "tls://my-nats.prod.svc:4222"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			equal(t, "InternalHost", tc.in.InternalHost(), tc.wantHost)
			equal(t, "InternalURL", render.InternalURL(tc.in), tc.wantURL)
		})
	}
}

// TestInternalEndpointIsTheClientService: the endpoint names the client
// Service and its port, in the cluster's namespace.
func TestInternalEndpointIsTheClientService(t *testing.T) {
	c := cluster(named("edge"))
	svc := find[*corev1.Service](t, renderObjects(t, c, render.Inputs{}), c.ClientServiceName())
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("client Service has %d ports, want 1", len(svc.Spec.Ports))
	}
	want := fmt.Sprintf("tls://%s.%s.svc:%d", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
	equal(t, "InternalURL", render.InternalURL(c), want)
}
