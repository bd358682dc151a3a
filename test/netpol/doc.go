// Package netpol tests the meaning of the NetworkPolicy that render makes:
// who may reach which port of a NatsCluster's servers, as decided by a real
// policy evaluator (the matcher of github.com/mattfenwick/cyclonus), since
// the loopback cluster cannot enforce policies.
//
// It is a module of its own so that cyclonus and its dependencies (logrus,
// ginkgo, resty, ...) stay out of the operator's module graph; it replaces
// github.com/kubenats/kubenats with the repository itself. `make test` runs it.
package netpol
