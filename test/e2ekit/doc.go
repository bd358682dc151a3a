// Package e2ekit is the harness of the end-to-end suites on the loopback
// cluster (test/loopback): a real control plane with
// kube-controller-manager, and a kubelet of our own that runs each server
// as a real nats-server process on its own loopback address, with the
// operator in the test process as its own ServiceAccount under the shipped
// RBAC and admission policies.
//
// Each suite is a package of its own with one cluster and one operator
// (controller-runtime allows one controller of a name per process), so
// that `go test ./...` runs suites side by side: test/e2e for the
// NatsCluster's life, others for what is built on it. A suite's TestMain
// calls Run; its tests use Cluster and the helpers here, each in a
// namespace of its own.
//
// The cluster's directory (kubelet, controller manager, operator and
// server logs) is kept when a test fails, or when KUBENATS_KEEP_LOOPBACK
// is set; KUBENATS_TEST_LOG=1 turns the operator's debug logs on. A leak
// scanner watches the whole suite for secrets where they must not be.
package e2ekit
