// Package release names the operator's own image. It is the one place
// the reference is written: `make image` builds under it, the servers'
// metrics containers default to it, and the install's kustomization and
// the chart's values and appVersion must agree with it (the test beside
// this file fails when they do not).
package release

const (
	// Repository is where the operator's image is published.
	Repository = "ghcr.io/kubenats/kubenats"
	// Version is the release the install and the chart name.
	Version = "v0.1.0"
	// Image is the full reference of the released image.
	Image = Repository + ":" + Version
)
