// Package helm tests the operator's chart (charts/kubenats) with Helm's
// own library: rendered for each documented mode and compared, object by
// object, with what config/ (kustomize) installs, and installed, upgraded
// and uninstalled against a real kube-apiserver. It is its own module so
// that Helm's dependencies stay out of the operator's.
package helm
