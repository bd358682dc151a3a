package exporter

// Sample is one series' value at a scrape: a family's name, its label
// values in the family's label order, and the value.
type Sample struct {
	Name   string
	Labels []string
	Value  float64
}

// boolValue is 1 for true, the Prometheus way of saying yes.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// boolLabel is a yes/no label as prometheus-nats-exporter writes it.
func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
