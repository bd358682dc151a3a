// Package kubectlplugin is `kubectl kubenats`: what a NatsCluster and its
// JetStream resources say, a support bundle of it with no secret in it,
// and the verbs that ask the operator for a change (pause, resume). Every
// verb reads or writes Kubernetes objects only: the operator carries a
// change out; the plugin never talks to the servers itself.
//
// Gathering (gather.go) reads; the views (status_view.go) are pure
// functions of what was gathered, table-tested; the verbs (verbs.go) are
// one annotation each.
package kubectlplugin
