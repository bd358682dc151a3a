// Package metrics is the operator's own series about the NatsClusters and
// JetStream resources it runs, beside controller-runtime's. They are set
// from the status each reconciler has just computed, in one call per
// pass, so that a gauge never says what the status does not.
package metrics
