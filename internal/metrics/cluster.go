package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is what the gauges show of one NatsCluster, computed by the
// reconciler from the status it writes (FromStatus).
type Cluster struct {
	Conditions []metav1.Condition
	// Servers is spec.replicas; Ready the servers passing readiness;
	// Pending the servers not yet on the current revision (a rollout or
	// scale-down under way).
	Servers, Ready, Pending int32
	// ReloadPending is true while servers have not confirmed the current
	// configuration.
	ReloadPending bool
	// CertExpiry is when the first certificate expires; zero: no TLS.
	CertExpiry metav1.Time
	// MeshStage is "", "Permissive" or "Strict", with Sidecars telling
	// whether the pods carry theirs yet.
	MeshStage string
	// Waiting is the reason of the Ready condition while it is not True:
	// what a rollout, scale-down or reload waits for (RollingUpdate,
	// ServerHung, ScalingDown, ...); "" when Ready.
	Waiting string
	// Leaders counts the Raft groups each server leads, by server (the
	// status' count); nil: not counted.
	Leaders map[string]int32
}

type key struct{ namespace, name string }

// Clusters holds the latest Cluster of every NatsCluster and serves them.
type Clusters struct {
	mu  sync.Mutex
	all map[key]Cluster

	condition, servers, ready, pending, reload, expiry, mesh, waiting, leaders *prometheus.Desc
}

// NewClusters makes an empty set.
func NewClusters() *Clusters {
	l := []string{"namespace", "natscluster"}
	return &Clusters{
		all:       map[key]Cluster{},
		condition: prometheus.NewDesc(ClusterCondition, "1 for the status a condition of the NatsCluster has (True, False or Unknown), 0 for the others.", append(l, "type", "status"), nil),
		servers:   prometheus.NewDesc(ClusterServers, "Servers the NatsCluster asks for (spec.replicas).", l, nil),
		ready:     prometheus.NewDesc(ClusterServersReady, "Servers passing their readiness probe.", l, nil),
		pending:   prometheus.NewDesc(ClusterPending, "Servers a rollout or scale-down has yet to bring to the current revision.", l, nil),
		reload:    prometheus.NewDesc(ClusterReload, "1 while some server has not confirmed it loaded the current configuration.", l, nil),
		expiry:    prometheus.NewDesc(ClusterCertExpiry, "When the first of the servers' certificates expires, Unix seconds.", l, nil),
		mesh:      prometheus.NewDesc(ClusterMeshStage, "1 for the mesh stage the cluster is in (None, Permissive, Strict).", append(l, "stage"), nil),
		waiting:   prometheus.NewDesc(ClusterWaiting, "1 while the NatsCluster is not Ready, labelled with what it waits for (the Ready condition's reason); no series when Ready.", append(l, "reason"), nil),
		leaders:   prometheus.NewDesc(ClusterLeaders, "Stream and consumer Raft groups the server leads, as last counted (spec.jetstream.balanceLeaders).", append(l, "server"), nil),
	}
}

// Set records c as the latest of namespace/name.
func (s *Clusters) Set(namespace, name string, c Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all[key{namespace, name}] = c
}

// Delete forgets namespace/name: a deleted cluster's series end.
func (s *Clusters) Delete(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, key{namespace, name})
}

// Describe implements prometheus.Collector.
func (s *Clusters) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.condition, s.servers, s.ready, s.pending, s.reload, s.expiry, s.mesh, s.waiting, s.leaders} {
		ch <- d
	}
}

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}
var meshStages = []string{"None", "Permissive", "Strict"}

// Collect implements prometheus.Collector. Each condition has a series
// per status, one of them 1 (the kube-state-metrics way), so that an
// alert on status="False" == 1 and a panel of the current status both
// read plainly.
func (s *Clusters) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]key, 0, len(s.all))
	for k := range s.all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].namespace < keys[j].namespace || keys[i].namespace == keys[j].namespace && keys[i].name < keys[j].name
	})
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, k := range keys {
		c := s.all[k]
		for _, cond := range c.Conditions {
			for _, st := range conditionStatuses {
				gauge(s.condition, b(cond.Status == st), k.namespace, k.name, cond.Type, string(st))
			}
		}
		gauge(s.servers, float64(c.Servers), k.namespace, k.name)
		gauge(s.ready, float64(c.Ready), k.namespace, k.name)
		gauge(s.pending, float64(c.Pending), k.namespace, k.name)
		gauge(s.reload, b(c.ReloadPending), k.namespace, k.name)
		if !c.CertExpiry.IsZero() {
			gauge(s.expiry, float64(c.CertExpiry.Unix()), k.namespace, k.name)
		}
		stage := c.MeshStage
		if stage == "" {
			stage = "None"
		}
		for _, m := range meshStages {
			gauge(s.mesh, b(m == stage), k.namespace, k.name, m)
		}
		if c.Waiting != "" {
			gauge(s.waiting, 1, k.namespace, k.name, c.Waiting)
		}
		servers := make([]string, 0, len(c.Leaders))
		for server := range c.Leaders {
			servers = append(servers, server)
		}
		sort.Strings(servers)
		for _, server := range servers {
			gauge(s.leaders, float64(c.Leaders[server]), k.namespace, k.name, server)
		}
	}
}

func b(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
