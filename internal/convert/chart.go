package convert

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The official NATS Helm chart (nats-io/k8s, chart nats 1.x and 2.x)
// labels everything it renders with helm.sh/chart: nats-<version> and
// app.kubernetes.io/name: nats. A release is its StatefulSet (named after
// the release), the ConfigMap holding nats.conf that the StatefulSet
// mounts, and its Services.
const (
	chartLabel     = "helm.sh/chart"
	chartLabelName = "app.kubernetes.io/name"
)

// chartRelease is one release of the chart, as rendered.
type chartRelease struct {
	sts      *appsv1.StatefulSet
	config   *corev1.ConfigMap // nil when not among the documents
	services []*corev1.Service
}

func (r chartRelease) id() string { return "StatefulSet " + r.sts.Namespace + "/" + r.sts.Name }

// IsChartDocument reports whether doc is an object the official chart
// rendered (by its labels).
func IsChartDocument(doc []byte) bool {
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if yaml.Unmarshal(doc, &o) != nil {
		return false
	}
	return strings.HasPrefix(o.Metadata.Labels[chartLabel], "nats-") && o.Metadata.Labels[chartLabelName] == "nats"
}

// Chart reads what the official chart rendered for its releases among
// docs (`helm get manifest`, or the objects read back with kubectl get -o
// yaml) and writes for each the NatsCluster that runs the same servers:
// the release's name (so that its client Service takes the name of the
// chart's, and its servers the chart's pod names), replicas, version,
// JetStream sizes, resources and pod placement, client authentication and
// TLS, and the nats.conf settings kubenats passes through. Each setting it
// cannot carry is a Loss that says why and what to do; a password or token
// the chart wrote in clear into its ConfigMap goes into a Secret of its
// own, labelled for kubenats. namespace is given to objects that name
// none.
func Chart(docs [][]byte, namespace string) (Result, error) {
	return chartWithin(docs, namespace, chartConfLimits)
}

// chartWithin is Chart with nats.conf held to limits.
func chartWithin(docs [][]byte, namespace string, limits confLimits) (Result, error) {
	releases, err := chartReleases(docs, namespace)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, r := range releases {
		t := &chartTranslation{release: r, limits: limits}
		if err := t.translate(); err != nil {
			return Result{}, fmt.Errorf("%s: %w", r.id(), err)
		}
		res.Objects = append(res.Objects, t.cluster)
		for _, s := range t.secrets {
			res.Objects = append(res.Objects, s)
			res.Secrets = append(res.Secrets, s.Namespace+"/"+s.Name)
		}
		res.Lost = append(res.Lost, t.lost...)
	}
	return res, nil
}

// chartReleases finds the chart's StatefulSets among docs, each with the
// ConfigMap and Services of its release.
func chartReleases(docs [][]byte, namespace string) ([]chartRelease, error) {
	var (
		sets     []*appsv1.StatefulSet
		configs  = map[string]*corev1.ConfigMap{}
		services []*corev1.Service
	)
	for i, doc := range docs {
		if !IsChartDocument(doc) {
			continue
		}
		var head metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var obj interface {
			GetNamespace() string
			SetNamespace(string)
		}
		switch head.Kind {
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			sets, obj = append(sets, s), s
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "Service":
			s := &corev1.Service{}
			services, obj = append(services, s), s
		default:
			continue // the chart's PodDisruptionBudget, ServiceAccount, nats-box: kubenats makes or needs none
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if c, ok := obj.(*corev1.ConfigMap); ok {
			configs[c.Namespace+"/"+c.Name] = c
		}
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no StatefulSet of the official NATS chart (labels %s: nats-*, %s: nats) in the input", chartLabel, chartLabelName)
	}
	out := make([]chartRelease, 0, len(sets))
	for _, s := range sets {
		r := chartRelease{sts: s}
		if name := configMapName(s); name != "" {
			r.config = configs[s.Namespace+"/"+name]
		}
		for _, svc := range services {
			if svc.Namespace == s.Namespace && svc.Labels["app.kubernetes.io/instance"] == s.Labels["app.kubernetes.io/instance"] {
				r.services = append(r.services, svc)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// configMapName is the ConfigMap the StatefulSet's nats container reads
// its configuration from: the volume mounted where --config points.
func configMapName(s *appsv1.StatefulSet) string {
	c := natsContainer(s)
	if c == nil {
		return ""
	}
	dir := ""
	for i, a := range c.Args {
		if (a == "--config" || a == "-c") && i+1 < len(c.Args) {
			dir = c.Args[i+1][:strings.LastIndex(c.Args[i+1], "/")+1]
		}
	}
	for _, m := range c.VolumeMounts {
		if strings.TrimSuffix(m.MountPath, "/")+"/" != dir {
			continue
		}
		for _, v := range s.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	return ""
}

// natsContainer is the container that runs nats-server: the chart names
// it nats.
func natsContainer(s *appsv1.StatefulSet) *corev1.Container {
	for i := range s.Spec.Template.Spec.Containers {
		if s.Spec.Template.Spec.Containers[i].Name == "nats" {
			return &s.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

// imageTag is the official image: nats:<version>[-<variant>].
var imageTag = regexp.MustCompile(`^(?:(?:docker\.io/)?(?:library/)?nats):((\d+\.\d+\.\d+)(-[0-9A-Za-z.-]+)?)$`)

// imageVersion is the NATS version an image's tag names, and whether the
// image is the official one of that version (nats:<version>), which the
// version alone selects.
func imageVersion(image string) (version string, official bool) {
	if m := imageTag.FindStringSubmatch(image); m != nil {
		return m[2], m[3] == ""
	}
	tag := image[strings.LastIndex(image, ":")+1:]
	if m := tagVersion.FindStringSubmatch(tag); m != nil {
		return m[1], false
	}
	return "", false
}

var tagVersion = regexp.MustCompile(`^(\d+\.\d+\.\d+)`)

// chartPodLabels are the labels the chart puts on every object; they are
// the chart's, not the user's.
var chartPodLabels = []string{"app.kubernetes.io/component", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by",
	"app.kubernetes.io/name", "app.kubernetes.io/version", chartLabel}

// userLabels are labels beside the chart's own.
func userLabels(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if slices.Contains(chartPodLabels, k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
