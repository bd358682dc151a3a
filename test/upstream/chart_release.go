package upstream

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// ChartVersion is the chart version (and its appVersion, the server's)
// the stand-in release claims to be rendered by: the real rendering CI
// holds is of this version.
const ChartVersion = "2.14.2"

// Chart is a release of the official chart as its documentation lays it
// out (its README and values, the objects it renders): what
// ChartRelease renders.
type Chart struct {
	Release   string // the release's name: its StatefulSet's and client Service's
	Replicas  int32
	FileStore string // the JetStream claim's size
}

// The chart's fixed layout: where it mounts what, and its ports.
const (
	chartConfigDir   = "/etc/nats-config"
	chartPidDir      = "/var/run/nats"
	chartPidFile     = chartPidDir + "/nats.pid"
	chartStoreDir    = "/data"
	chartClaim       = "nats-js"
	chartClient      = 4222
	chartCluster     = 6222
	chartMonitor     = 8222
	chartReloader    = "natsio/nats-server-config-reloader:0.23.0"
	chartGracePeriod = 60
)

// ChartRelease renders r the way the official chart lays a clustered
// JetStream release out: ConfigMap <release>-config holding nats.conf as
// JSON, the headless Service <release>-headless (not-ready addresses
// published), the client Service <release>, the PodDisruptionBudget and
// the StatefulSet (parallel pods, claim template nats-js, the nats
// container and the config reloader sharing the pid directory), every
// object with the chart's labels. Objects carry no namespace, as `helm
// template` writes them.
func ChartRelease(r Chart) []byte {
	objects := []any{chartConfigMap(r), chartHeadless(r), chartBudget(r), chartClientService(r), chartStatefulSet(r)}
	var out strings.Builder
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			panic(err) // typed objects always marshal
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return []byte(out.String())
}

// chartLabels are on every object: the selector's three, and Helm's.
func chartLabels(r Chart) map[string]string {
	l := chartSelector(r)
	l["app.kubernetes.io/managed-by"] = "Helm"
	l["app.kubernetes.io/version"] = ChartVersion
	l["helm.sh/chart"] = "nats-" + ChartVersion
	return l
}

func chartSelector(r Chart) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "nats",
		"app.kubernetes.io/instance":  r.Release,
		"app.kubernetes.io/component": "nats",
	}
}

func chartMeta(r Chart, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: chartLabels(r)}
}

func headlessName(r Chart) string { return r.Release + "-headless" }
func configName(r Chart) string   { return r.Release + "-config" }

// chartConf is nats.conf as the chart writes it: JSON with sorted keys,
// except the values nats.conf reads unquoted (sizes, variables).
func chartConf(r Chart) string {
	var routes []string
	for i := range r.Replicas {
		routes = append(routes, fmt.Sprintf("nats://%s-%d.%s:%d", r.Release, i, headlessName(r), chartCluster))
	}
	conf := map[string]any{
		"server_name":            unquoted("$SERVER_NAME"),
		"port":                   chartClient,
		"http_port":              chartMonitor,
		"pid_file":               chartPidFile,
		"lame_duck_duration":     "30s",
		"lame_duck_grace_period": "10s",
		"cluster": map[string]any{
			"name":         r.Release,
			"port":         chartCluster,
			"no_advertise": true,
			"routes":       routes,
		},
		"jetstream": map[string]any{
			"store_dir":        chartStoreDir,
			"max_file_store":   unquoted(r.FileStore),
			"max_memory_store": 0,
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		panic(err)
	}
	return unquotedValue.ReplaceAllString(string(data), "$1") + "\n"
}

// unquoted marks a value written without quotes: json writes it as a
// marked string, which chartConf then unwraps.
func unquoted(s string) string { return "\x60raw\x60" + s + "\x60raw\x60" }

var unquotedValue = regexp.MustCompile("\"`raw`([^\"`]*)`raw`\"")

func chartConfigMap(r Chart) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: chartMeta(r, configName(r)),
		Data:       map[string]string{"nats.conf": chartConf(r)},
	}
}

func servicePort(name string, port int32, protocol string) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromString(name), AppProtocol: ptr.To(protocol)}
}

func chartHeadless(r Chart) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: chartMeta(r, headlessName(r)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 chartSelector(r),
			Ports: []corev1.ServicePort{
				servicePort("nats", chartClient, "tcp"),
				servicePort("cluster", chartCluster, "tcp"),
				servicePort("monitor", chartMonitor, "http"),
			},
		},
	}
}

func chartClientService(r Chart) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: chartMeta(r, r.Release),
		Spec: corev1.ServiceSpec{
			Selector: chartSelector(r),
			Ports:    []corev1.ServicePort{servicePort("nats", chartClient, "tcp")},
		},
	}
}

func chartBudget(r Chart) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: chartMeta(r, r.Release),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: chartSelector(r)},
		},
	}
}

// healthz probes the monitor port at path.
func healthz(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("monitor")}},
		PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 5,
	}
}

func chartStatefulSet(r Chart) *appsv1.StatefulSet {
	pid := corev1.VolumeMount{Name: "pid", MountPath: chartPidDir}
	config := corev1.VolumeMount{Name: "config", MountPath: chartConfigDir}
	server := corev1.Container{
		Name:  "nats",
		Image: "nats:" + ChartVersion + "-alpine",
		Args:  []string{"--config", chartConfigDir + "/nats.conf"},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "SERVER_NAME", Value: "$(POD_NAME)"},
		},
		Ports: []corev1.ContainerPort{
			{Name: "nats", ContainerPort: chartClient},
			{Name: "cluster", ContainerPort: chartCluster},
			{Name: "monitor", ContainerPort: chartMonitor},
		},
		StartupProbe:   healthz("/healthz", 5, 90),
		ReadinessProbe: healthz("/healthz?js-server-only=true", 10, 3),
		LivenessProbe:  healthz("/healthz?js-enabled-only=true", 30, 3),
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"nats-server", "--signal", "ldm=" + chartPidFile},
		}}},
		VolumeMounts: []corev1.VolumeMount{config, pid, {Name: chartClaim, MountPath: chartStoreDir}},
	}
	reloader := corev1.Container{
		Name:         "reloader",
		Image:        chartReloader,
		Args:         []string{"-pid", chartPidFile, "-config", chartConfigDir + "/nats.conf"},
		VolumeMounts: []corev1.VolumeMount{pid, config},
	}
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: chartMeta(r, r.Release),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(r.Replicas),
			ServiceName:         headlessName(r),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: chartSelector(r)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: chartLabels(r)},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{server, reloader},
					ShareProcessNamespace:         ptr.To(true),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](chartGracePeriod),
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: configName(r)},
						}}},
						{Name: "pid", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: chartClaim},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse(r.FileStore),
					}},
				},
			}},
		},
	}
}
