package exporter

// Identity is who the series are about: the server's name (nats.conf's
// server_name, which is its pod's name and survives restarts, unlike the
// id nats-server makes at every start), its namespace and NatsCluster.
type Identity struct {
	Server      string
	Namespace   string
	NatsCluster string
}

// varzValues are the /varz numbers in the order of varzFields.
func varzValues(v Varz) []float64 {
	return []float64{
		v.Connections, v.TotalConnections, v.Subscriptions, v.SlowConsumers,
		v.InMsgs, v.OutMsgs, v.InBytes, v.OutBytes, v.Mem, v.CPU, v.Cores,
		v.GoMaxProcs, v.Routes, v.Remotes, v.Leafnodes, v.MaxConnections,
		v.MaxPayload, v.StaleConnections,
	}
}

// VarzSamples are the nats_varz_* series of one /varz answer. server_id
// is the server's name (Identity), never /varz's server_id.
func VarzSamples(id Identity, v Varz) []Sample {
	labels := []string{id.Server, id.Server, id.Namespace, id.NatsCluster}
	values := varzValues(v)
	out := make([]Sample, 0, len(values)+1)
	for i, f := range varzFields {
		out = append(out, Sample{Name: "nats_varz_" + f, Labels: labels, Value: values[i]})
	}
	if !v.Start.IsZero() && !v.Now.IsZero() {
		out = append(out, Sample{Name: FamilyUptime, Labels: labels, Value: max(v.Now.Sub(v.Start).Seconds(), 0)})
	}
	return out
}

// HealthzSample is nats_healthz_status: 0 when /healthz says ok, 1
// otherwise (the exporter's convention), also when it did not answer.
func HealthzSample(id Identity, h *Healthz) Sample {
	status := 1.0
	if h != nil && h.Status == "ok" {
		status = 0
	}
	return Sample{Name: FamilyHealthz, Labels: []string{id.Server, id.Server, id.Namespace, id.NatsCluster}, Value: status}
}
