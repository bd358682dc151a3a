package convert

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/render"
)

// chartTranslation is one release on its way to a NatsCluster.
type chartTranslation struct {
	release chartRelease
	limits  confLimits // on nats.conf (chartConfLimits)
	cluster *v1alpha1.NatsCluster
	secrets []*corev1.Secret
	lost    []Loss
}

// lose names field as not carried, and why. Fields are nats.conf's key
// paths, the tenant's words too, and are cut (bounded); the reasons never
// quote a value of nats.conf's: the operator writes them into the
// tenant's status.
func (t *chartTranslation) lose(field, why string) {
	t.lost = append(t.lost, Loss{Object: t.release.id(), Field: bounded(field), Why: why})
}

func (t *chartTranslation) translate() error {
	s := t.release.sts
	t.cluster = &v1alpha1.NatsCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace},
	}
	spec := &t.cluster.Spec
	if s.Spec.Replicas != nil {
		spec.Replicas = ptr.To(*s.Spec.Replicas)
	}
	c := natsContainer(s)
	if c == nil {
		return fmt.Errorf("no container named nats")
	}
	t.image(c.Image)
	if len(c.Resources.Limits) > 0 || len(c.Resources.Requests) > 0 {
		spec.Resources = c.Resources.DeepCopy()
	}
	t.pod()
	if t.release.config == nil {
		return fmt.Errorf("its ConfigMap %q (nats.conf) is not in the input", configMapName(s))
	}
	text, ok := t.release.config.Data["nats.conf"]
	if !ok {
		return fmt.Errorf("its ConfigMap %q has no nats.conf", t.release.config.Name)
	}
	values, err := chartConf(text, c.Env, t.limits)
	if err != nil {
		return err
	}
	t.conf(values, c)
	t.clientService()
	return nil
}

// image carries the server image: the version, and the image itself when
// it is not the official one of that version.
func (t *chartTranslation) image(image string) {
	version, official := imageVersion(image)
	if version == "" {
		t.lose("image "+image, "its tag names no NATS version: set spec.version, and spec.image to this image")
		return
	}
	t.cluster.Spec.Version = version
	if !official {
		t.cluster.Spec.Image = image
	}
}

// pod carries the pod settings kubenats has a field for, and names the
// containers it does not run.
func (t *chartTranslation) pod() {
	tpl := t.release.sts.Spec.Template
	p := &t.cluster.Spec.PodTemplate
	p.Labels = userLabels(tpl.Labels)
	p.Annotations = tpl.Annotations
	p.NodeSelector = tpl.Spec.NodeSelector
	p.Tolerations = tpl.Spec.Tolerations
	p.Affinity = tpl.Spec.Affinity
	p.TopologySpreadConstraints = tpl.Spec.TopologySpreadConstraints
	p.PriorityClassName = tpl.Spec.PriorityClassName
	p.ImagePullSecrets = tpl.Spec.ImagePullSecrets
	for _, c := range tpl.Spec.Containers {
		switch c.Name {
		case "nats":
		case "reloader":
			// kubenats reloads the servers itself, through the system account.
		case "prom-exporter":
			t.lose("container prom-exporter", "kubenats serves the servers' metrics itself: set spec.monitoring")
		default:
			t.lose("container "+c.Name, "kubenats runs nats-server alone in its pods")
		}
	}
	for _, c := range tpl.Spec.InitContainers {
		t.lose("init container "+c.Name, "kubenats runs nats-server alone in its pods")
	}
}

// clientService carries the client Service's type and annotations: the
// NatsCluster's Service has the release's name, the chart's client
// Service's.
func (t *chartTranslation) clientService() {
	for _, svc := range t.release.services {
		if svc.Name != t.release.sts.Name {
			continue // the headless Service: kubenats makes its own
		}
		out := &t.cluster.Spec.Service
		out.Annotations = svc.Annotations
		switch svc.Spec.Type {
		case "", corev1.ServiceTypeClusterIP:
		case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
			out.Type = v1alpha1.ServiceType(svc.Spec.Type)
			out.LoadBalancerClass = svc.Spec.LoadBalancerClass
			out.LoadBalancerSourceRanges = svc.Spec.LoadBalancerSourceRanges
		default:
			t.lose("Service "+svc.Name+" type", fmt.Sprintf("kubenats makes a ClusterIP, NodePort or LoadBalancer Service, not %s", svc.Spec.Type))
		}
	}
}

// The chart's own settings, which kubenats writes itself with the same
// values: nothing to carry and nothing lost.
var chartDefaults = map[string]any{
	"port": int64(render.ClientPort), "http_port": int64(render.MonitorPort), "monitor_port": int64(render.MonitorPort),
	"lame_duck_duration": render.LameDuckDuration.String(), "lame_duck_grace_period": render.LameDuckGracePeriod.String(),
}

// conf carries nats.conf, key by key in sorted order.
func (t *chartTranslation) conf(values map[string]any, c *corev1.Container) {
	spec := &t.cluster.Spec
	authorized := false
	for _, key := range sortedKeys(values) {
		v := values[key]
		switch key = strings.ToLower(key); {
		case key == "server_name":
			if v != fromThePod {
				t.lose("nats.conf server_name", "kubenats names each server after its pod, as the chart does by default")
			}
		case key == "pid_file":
			// kubenats' own, for its lame-duck stop.
		case chartDefaults[key] != nil:
			if fmt.Sprint(v) != fmt.Sprint(chartDefaults[key]) {
				t.lose("nats.conf "+key, fmt.Sprintf("kubenats sets %v", chartDefaults[key]))
			}
		case key == "cluster":
			t.routes(v)
		case key == "jetstream":
			t.jetstream(v, c)
		case key == "authorization":
			authorized = t.authorization(v)
		case key == "tls":
			t.clientTLS(v, c)
		case key == "accounts" || key == "no_auth_user" || key == "operator" || key == "resolver" || key == "system_account" || key == "resolver_preload":
			t.lose("nats.conf "+key, "accounts are NatsAccounts and their users NatsUsers, on a NatsCluster in auth mode jwt (docs/accounts.md)")
		case key == "websocket" || key == "mqtt" || key == "leafnodes" || key == "gateway":
			// kubenats has the same listener as spec.<key>, with its own
			// names for the settings: written by hand once, not guessed.
			t.lose("nats.conf "+key, "set spec."+key+" (docs/websocket-mqtt.md, docs/topologies.md)")
		case natsconf.IsPassthroughKey(key):
			raw, err := json.Marshal(v)
			if err != nil {
				// The error would quote the value (+Inf).
				t.lose("nats.conf "+key, "kubenats cannot write its value as JSON")
				continue
			}
			if spec.Config == nil {
				spec.Config = map[string]apiextensionsv1.JSON{}
			}
			spec.Config[key] = apiextensionsv1.JSON{Raw: raw}
		default:
			t.lose("nats.conf "+key, "kubenats has no field for it")
		}
	}
	if !authorized {
		// The chart's default: anyone who reaches the port gets in.
		// Clients that connect without credentials keep doing so.
		spec.Auth.Mode = v1alpha1.AuthNone
	}
	if spec.TLS.Client == nil {
		// The chart's clients speak plaintext: kubenats serves TLS beside
		// it, and refuses plaintext once allowPlaintext is set to false.
		spec.TLS.Client = &v1alpha1.ClientTLSSpec{AllowPlaintext: ptr.To(true)}
	}
}

// routes: kubenats routes every server to every other itself, closed by a
// password and mutual TLS; the cluster name is the NatsCluster's.
func (t *chartTranslation) routes(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		t.lose("nats.conf cluster", "not a block")
		return
	}
	for _, key := range sortedKeys(m) {
		switch val := m[key]; key {
		case "name":
			if val != t.release.sts.Name {
				t.lose("nats.conf cluster.name", fmt.Sprintf("kubenats names the cluster after the NatsCluster, %q: name the NatsCluster as nats.conf names the cluster, or the servers form a new cluster", t.release.sts.Name))
			}
		case "port":
			if fmt.Sprint(val) != fmt.Sprint(render.ClusterPort) {
				t.lose("nats.conf cluster.port", fmt.Sprintf("kubenats routes on %d", render.ClusterPort))
			}
		case "routes", "no_advertise", "advertise", "authorization", "tls":
			// kubenats writes its own: routes to every server, closed.
		default:
			t.lose("nats.conf cluster."+key, "kubenats has no field for it")
		}
	}
}

// jetstream carries the store sizes and domain; the file store's size is
// max_file_store, or the claim's when nats.conf sets none.
func (t *chartTranslation) jetstream(v any, c *corev1.Container) {
	js := &t.cluster.Spec.JetStream
	m, ok := v.(map[string]any)
	if !ok {
		if v == false || v == "disabled" {
			js.Enabled = ptr.To(false)
		}
		return
	}
	js.Enabled = ptr.To(true)
	storeDir := render.StoreDir
	for _, key := range sortedKeys(m) {
		switch val := m[key]; key {
		case "max_file_store", "max_file":
			if n, ok := val.(int64); ok && n > 0 {
				js.FileStore.Size = resource.NewQuantity(n, resource.BinarySI)
			}
		case "max_memory_store", "max_mem":
			if n, ok := val.(int64); ok && n > 0 {
				js.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: *resource.NewQuantity(n, resource.BinarySI)}
			}
		case "store_dir":
			storeDir = fmt.Sprint(val)
		case "domain":
			js.Domain = fmt.Sprint(val)
		case "enabled":
			if val == false {
				js.Enabled = ptr.To(false)
			}
		default:
			t.lose("nats.conf jetstream."+key, "kubenats has no field for it")
		}
	}
	if path.Clean(storeDir) != render.StoreDir {
		t.lose("nats.conf jetstream.store_dir", fmt.Sprintf("kubenats keeps the store at %s: the streams under nats.conf's store_dir would not be found", render.StoreDir))
	}
	claim := t.claimAt(c, storeDir)
	if claim == nil {
		t.lose("jetstream store", "no claim template is mounted where nats.conf keeps the store (jetstream.store_dir): the chart kept the streams on the pod's own disk")
		return
	}
	if js.FileStore.Size == nil {
		if size, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			js.FileStore.Size = &size
		}
	}
	js.FileStore.StorageClassName = claim.Spec.StorageClassName
}

// claimAt is the claim template mounted at dir in c.
func (t *chartTranslation) claimAt(c *corev1.Container, dir string) *corev1.PersistentVolumeClaim {
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != path.Clean(dir) {
			continue
		}
		for i, tpl := range t.release.sts.Spec.VolumeClaimTemplates {
			if tpl.Name == m.Name {
				return &t.release.sts.Spec.VolumeClaimTemplates[i]
			}
		}
	}
	return nil
}
