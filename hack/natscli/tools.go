//go:build tools

// Package natscli pins natscli, the NATS command-line tool, for the
// backup interoperability tests: hack/build-natscli.sh builds its `nats`
// command from the module proxy at the version go.mod names.
package natscli

import _ "github.com/nats-io/natscli/nats"
