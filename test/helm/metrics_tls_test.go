package helm

import (
	"slices"
	"strings"
	"testing"
)

// caOfTheInstall are the objects of dist/install-metrics-certmanager.yaml
// that make its own CA; the chart asks the issuer it is given instead.
var caOfTheInstall = []string{
	"Issuer/" + operatorNamespace + "/kubenats-metrics-root",
	"Certificate/" + operatorNamespace + "/kubenats-metrics-ca",
	"Issuer/" + operatorNamespace + "/kubenats-metrics-ca",
}

// TestMetricsCertificateFromCertManagerAsTheInstallDoes: the chart asked
// for a cert-manager certificate of the metrics endpoint (with the issuer
// the install makes) renders what config/metrics-certmanager does, object
// for object: the leaf Certificate, the Service it names, and the
// operator's Deployment mounting the Secret and serving it with
// --metrics-cert-dir. Careless variant run: the chart's Certificate
// without "rotationPolicy: Always" (differs from the install), and a
// Deployment without the volume (the flag names a directory with nothing
// in it: the operator refuses to start).
func TestMetricsCertificateFromCertManagerAsTheInstallDoes(t *testing.T) {
	want := readDist(t, "install-metrics-certmanager.yaml")
	for _, k := range append(caOfTheInstall, "Namespace//"+operatorNamespace) {
		if _, ok := want[k]; !ok {
			t.Fatalf("%s is not in dist/install-metrics-certmanager.yaml", k)
		}
		delete(want, k)
	}
	got := mustRender(t, operatorNamespace, "metrics: {service: {enabled: true}, tls: {issuerRef: {name: kubenats-metrics-ca}}}")
	for _, k := range got.of("CustomResourceDefinition") {
		// The chart keeps its CRDs on uninstall (TestDefaultValuesInstallWhatConfigDefaultDoes).
		delete(got[k]["metadata"].(map[string]any)["annotations"].(map[string]any), "helm.sh/resource-policy")
	}
	if d := compare(want, got); len(d) > 0 {
		t.Errorf("the chart with metrics.tls.issuerRef differs from dist/install-metrics-certmanager.yaml:\n%s", strings.Join(d, "\n"))
	}
}

// TestMetricsCertificateValues: each way of giving the endpoint its
// certificate, and what the ServiceMonitor then verifies.
func TestMetricsCertificateValues(t *testing.T) {
	smKey := "ServiceMonitor/" + operatorNamespace + "/kubenats"
	tlsConfig := func(t *testing.T, objs objects) map[string]any {
		t.Helper()
		sm := objs[smKey]
		if sm == nil {
			t.Fatal("no ServiceMonitor")
		}
		return field(sm, "spec.endpoints").([]any)[0].(map[string]any)["tlsConfig"].(map[string]any)
	}
	mounted := func(t *testing.T, objs objects) string {
		t.Helper()
		vols, _ := field(objs["Deployment/"+operatorNamespace+"/kubenats"], "spec.template.spec.volumes").([]any)
		mounts, _ := operatorContainer(t, objs)["volumeMounts"].([]any)
		if len(vols) != 1 || len(mounts) != 1 {
			return ""
		}
		if field(mounts[0].(map[string]any), "mountPath") != "/etc/kubenats/metrics-tls" || field(mounts[0].(map[string]any), "readOnly") != true {
			t.Errorf("mount %v", mounts[0])
		}
		name, _ := field(vols[0].(map[string]any), "secret.secretName").(string)
		return name
	}
	for _, tc := range []struct {
		name, values string
		check        func(t *testing.T, objs objects)
	}{
		// A careless template keeping insecureSkipVerify beside the CA
		// would verify nothing.
		{"a Secret is served and verified", "metrics: {serviceMonitor: {enabled: true}, tls: {secretName: my-metrics-tls}}", func(t *testing.T, objs objects) {
			if !slices.Contains(args(t, objs), "--metrics-cert-dir=/etc/kubenats/metrics-tls") {
				t.Errorf("args %v", args(t, objs))
			}
			if s := mounted(t, objs); s != "my-metrics-tls" {
				t.Errorf("mounted Secret %q", s)
			}
			tc := tlsConfig(t, objs)
			if tc["insecureSkipVerify"] != nil || tc["serverName"] != "kubenats-metrics."+operatorNamespace+".svc" ||
				field(tc, "ca.secret.name") != "my-metrics-tls" || field(tc, "ca.secret.key") != "ca.crt" {
				t.Errorf("tlsConfig %v", tc)
			}
			if c := objs.of("Certificate"); len(c) > 0 {
				t.Errorf("a Certificate nobody asked for: %v", c)
			}
		}},
		{"a ClusterIssuer issues it", "metrics: {tls: {issuerRef: {name: corp-ca, kind: ClusterIssuer}}}", func(t *testing.T, objs objects) {
			c := objs["Certificate/"+operatorNamespace+"/kubenats-metrics"]
			if c == nil || field(c, "spec.issuerRef.name") != "corp-ca" || field(c, "spec.issuerRef.kind") != "ClusterIssuer" || field(c, "spec.secretName") != "kubenats-metrics-tls" {
				t.Fatalf("Certificate %v", c)
			}
			if s := mounted(t, objs); s != "kubenats-metrics-tls" {
				t.Errorf("mounted Secret %q", s)
			}
		}},
		{"no certificate: self-signed, verification skipped", "metrics: {serviceMonitor: {enabled: true}}", func(t *testing.T, objs objects) {
			for _, a := range args(t, objs) {
				if strings.HasPrefix(a, "--metrics-cert-dir") {
					t.Errorf("%s without a certificate", a)
				}
			}
			if s := mounted(t, objs); s != "" {
				t.Errorf("mounted Secret %q", s)
			}
			if tc := tlsConfig(t, objs); tc["insecureSkipVerify"] != true {
				t.Errorf("tlsConfig %v", tc)
			}
		}},
		{"metrics off: nothing mounted or issued", "metrics: {enabled: false, tls: {secretName: some-tls, issuerRef: {name: some-issuer}}}", func(t *testing.T, objs objects) {
			if s := mounted(t, objs); s != "" {
				t.Errorf("mounted Secret %q", s)
			}
			if c := objs.of("Certificate"); len(c) > 0 {
				t.Errorf("%v", c)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, mustRender(t, operatorNamespace, tc.values)) })
	}
}
