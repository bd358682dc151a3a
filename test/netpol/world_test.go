package netpol_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
)

// The world the policies are judged in: namespaces with the labels the API
// server gives them, and pods with the labels they would really carry.

const clusterNamespace = "apps"

// ns is a namespace as the API server labels it (kubernetes.io/metadata.name
// is set on every namespace and cannot be changed), plus extra labels.
func ns(name string, extra ...string) (string, map[string]string) {
	l := map[string]string{corev1.LabelMetadataName: name}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return name, l
}

// source is who opens a connection: a pod, or an address outside the
// cluster.
type source struct {
	name string
	peer matcher.TrafficPeer
}

func pod(name, ip string, namespace string, nsLabels map[string]string, podLabels map[string]string) source {
	return source{name: name, peer: matcher.TrafficPeer{
		IP:       ip,
		Internal: &matcher.InternalPeer{Namespace: namespace, NamespaceLabels: nsLabels, PodLabels: podLabels},
	}}
}

func external(name, ip string) source {
	return source{name: name, peer: matcher.TrafficPeer{IP: ip}}
}

func labels(kv ...string) map[string]string {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

// natsCluster is a NatsCluster in clusterNamespace with the given policy.
func natsCluster(name string, np *v1alpha1.NetworkPolicySpec) *v1alpha1.NatsCluster {
	return &v1alpha1.NatsCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterNamespace},
		Spec:       v1alpha1.NatsClusterSpec{NetworkPolicy: np},
	}
}

// rendered is what render makes of one NatsCluster: its NetworkPolicy, as
// `kubenats render` prints it and read back, and its servers' pods.
type rendered struct {
	policy *networkingv1.NetworkPolicy
	// server is one of its server pods, with the pod template's labels.
	server source
	// ports maps the nats container's port names to their numbers.
	ports map[string]int32
}

func renderCluster(t *testing.T, c *v1alpha1.NatsCluster, serverIP string) rendered {
	t.Helper()
	objs, err := render.Objects(c, render.Inputs{})
	if err != nil {
		t.Fatalf("render %s: %v", c.Name, err)
	}
	var out rendered
	for _, o := range objs {
		switch o := o.(type) {
		case *networkingv1.NetworkPolicy:
			out.policy = throughYAML(t, o)
		case *appsv1.StatefulSet:
			tmpl := o.Spec.Template
			_, nsLabels := ns(c.Namespace)
			out.server = pod(c.Name+" server", serverIP, c.Namespace, nsLabels, tmpl.Labels)
			out.ports = map[string]int32{}
			for _, ctr := range tmpl.Spec.Containers {
				if ctr.Name == render.ServerContainerName || ctr.Name == render.MetricsContainerName {
					for _, p := range ctr.Ports {
						out.ports[p.Name] = p.ContainerPort
					}
				}
			}
		}
	}
	if out.policy == nil || out.server.peer.Internal == nil {
		t.Fatalf("render %s gave no NetworkPolicy or no StatefulSet", c.Name)
	}
	return out
}

// throughYAML prints np as `kubenats render` does and reads it back: the
// evaluator judges the policy a user applies, not only the Go value.
func throughYAML(t *testing.T, np *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicy {
	t.Helper()
	var buf bytes.Buffer
	if err := manifest.WriteYAML(&buf, []runtime.Object{np}...); err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Documents(buf.Bytes())
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	var back networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(docs[0], &back); err != nil {
		t.Fatalf("the printed policy does not read back: %v\n%s", err, docs[0])
	}
	return &back
}

// operatorPod is a pod of the operator as dist/install.yaml runs it: the
// namespace and pod labels of config/manager's Deployment, read from the
// file, so that the defaults are checked against what ships.
func operatorPod(t *testing.T) source {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind == "Deployment" && d.Name == "kubenats" {
			name, nsLabels := ns(d.Namespace)
			return pod("the operator", "10.0.9.1", name, nsLabels, d.Spec.Template.Labels)
		}
	}
	t.Fatal("config/manager/manager.yaml has no Deployment kubenats")
	return source{}
}

// allowed asks the evaluator whether from may open a TCP connection to the
// server dst on the named port, with every policy in policies in force.
func allowed(policies *matcher.Policy, from source, dst rendered, portName string) bool {
	port, ok := dst.ports[portName]
	if !ok {
		panic(fmt.Sprintf("the nats container has no port %q", portName))
	}
	src := from.peer
	to := dst.server.peer
	return policies.IsTrafficAllowed(&matcher.Traffic{
		Source:           &src,
		Destination:      &to,
		ResolvedPort:     int(port),
		ResolvedPortName: portName,
		Protocol:         corev1.ProtocolTCP,
	}).IsAllowed()
}
