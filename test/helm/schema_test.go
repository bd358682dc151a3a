package helm

import (
	"strings"
	"testing"
)

// TestBadValuesFailAtInstall: values.schema.json refuses, before anything
// reaches the cluster, keys the chart does not know (a typo would else be
// ignored and the default silently kept) and values of the wrong shape,
// with Helm's message naming the key. Each case is a mistake a user
// makes; the message must point at it.
//
// Careless variant run: the schema without "additionalProperties": false
// at the top renders "imagee" (and "watchNamespace") without a word.
func TestBadValuesFailAtInstall(t *testing.T) {
	for _, tc := range []struct{ values, names string }{
		{"imagee: {repository: x}", "imagee"},
		{"watchNamespace: [apps]", "watchNamespace"},
		{"image: {repository: x, tags: v1}", "tags"},
		{"metrics: {enabeld: false}", "enabeld"},
		{"replicas: two", "replicas"},
		{"watchNamespaces: apps", "watchNamespaces"},
		{"watchNamespaces: [Apps_1]", "watchNamespaces"},
		{"allowedClusterIssuers: letsencrypt", "allowedClusterIssuers"},
		{"allowedImageRegistries: ['a,b']", "allowedImageRegistries"},
		{"connectionAllowedCIDRs: [10.0.0.1]", "connectionAllowedCIDRs"},
		{"serverAnswerTimeout: 3 seconds", "serverAnswerTimeout"},
		{"jetstreamWorkers: 0", "jetstreamWorkers"},
		{"metrics: {port: 8081}", "port"},
		{"image: {pullPolicy: Sometimes}", "pullPolicy"},
		{"extraArgs: [-v]", "extraArgs"},
		{"podLabels: {app.kubernetes.io/name: other}", "podLabels"},
		{"crds: {install: 'yes'}", "install"},
		{"metrics: {tls: {secretname: x}}", "secretname"},
		{"metrics: {tls: {issuerRef: {name: x, kind: Cluster}}}", "kind"},
		{"metrics: {tls: {secretName: My_Secret}}", "secretName"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := render(t, operatorNamespace, tc.values)
			if err == nil {
				t.Fatalf("%q rendered", tc.values)
			}
			if !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("the message does not name %s as the schema's: %v", tc.names, err)
			}
			t.Log(err)
		})
	}
}
