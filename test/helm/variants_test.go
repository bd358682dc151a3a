package helm

import (
	"slices"
	"strings"
	"testing"
)

// operatorContainer returns the operator container of a rendering.
func operatorContainer(t *testing.T, objs objects) map[string]any {
	t.Helper()
	d, ok := objs["Deployment/"+operatorNamespace+"/kubenats"]
	if !ok {
		t.Fatal("no Deployment kubenats")
	}
	containers := field(d, "spec.template.spec.containers").([]any)
	return containers[0].(map[string]any)
}

func args(t *testing.T, objs objects) []string {
	t.Helper()
	var out []string
	for _, a := range operatorContainer(t, objs)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func env(t *testing.T, objs objects, name string) any {
	t.Helper()
	for _, e := range operatorContainer(t, objs)["env"].([]any) {
		if e.(map[string]any)["name"] == name {
			return e.(map[string]any)["value"]
		}
	}
	return nil
}

// TestValueVariants renders each documented value (docs/install.md) and
// checks what it is for: the flag it sets, the objects it adds or
// removes. Each case names what a careless template would do instead.
func TestValueVariants(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		check        func(t *testing.T, objs objects)
	}{
		{"image names the operator's and the exporter's image", "image: {repository: registry.example.com/kubenats, tag: v9.9.9, pullPolicy: Always}", func(t *testing.T, objs objects) {
			c := operatorContainer(t, objs)
			if c["image"] != "registry.example.com/kubenats:v9.9.9" || c["imagePullPolicy"] != "Always" {
				t.Errorf("image %v, pull policy %v", c["image"], c["imagePullPolicy"])
			}
			// The servers' metrics containers run the operator's image: a
			// template that set only the container's would leave them behind.
			if v := env(t, objs, "KUBENATS_IMAGE"); v != "registry.example.com/kubenats:v9.9.9" {
				t.Errorf("KUBENATS_IMAGE %v", v)
			}
		}},
		{"resources replace the defaults", "resources: {requests: {cpu: 200m, memory: 256Mi}, limits: {memory: 256Mi}}\ngoMemLimit: 220MiB", func(t *testing.T, objs objects) {
			if r := field(operatorContainer(t, objs), "resources.limits.memory"); r != "256Mi" {
				t.Errorf("limit %v", r)
			}
			if v := env(t, objs, "GOMEMLIMIT"); v != "220MiB" {
				t.Errorf("GOMEMLIMIT %v", v)
			}
		}},
		{"allow-lists become flags", "allowedImageRegistries: [registry.example.com, docker.io/nats]\nallowedClusterIssuers: [letsencrypt, example.com/vault]\nconnectionAllowedCIDRs: [10.0.0.0/8]\nconnectionAllowedNamespaces: [apps]", func(t *testing.T, objs objects) {
			a := args(t, objs)
			for _, want := range []string{"--allowed-image-registries=registry.example.com,docker.io/nats", "--allowed-cluster-issuers=letsencrypt,example.com/vault", "--connection-allowed-cidrs=10.0.0.0/8", "--connection-allowed-namespaces=apps"} {
				if !slices.Contains(a, want) {
					t.Errorf("no %s in %v", want, a)
				}
			}
		}},
		// The Ingress allow-lists: an empty host list allows none (as
		// for ClusterIssuers), annotations and the other-namespaces
		// switch become their flags.
		{"the Ingress allow-lists become flags", "allowedIngressHosts: []\nallowedIngressAnnotations: [nginx.ingress.kubernetes.io/proxy-*]\nconnectionAllowOtherNamespaces: true", func(t *testing.T, objs objects) {
			a := args(t, objs)
			for _, want := range []string{"--allowed-ingress-hosts=", "--allowed-ingress-annotations=nginx.ingress.kubernetes.io/proxy-*", "--connection-allow-other-namespaces"} {
				if !slices.Contains(a, want) {
					t.Errorf("no %s in %v", want, a)
				}
			}
		}},
		// No ClusterIssuer list, or an empty one, passes no flag: the
		// operator's own default then applies, which allows none
		// (TestIssuerPolicyListsClusterIssuersByGroupAndName holds it).
		{"no ClusterIssuer list allows none", "", func(t *testing.T, objs objects) {
			for _, a := range args(t, objs) {
				if strings.HasPrefix(a, "--allowed-cluster-issuers") {
					t.Errorf("%s at the default", a)
				}
			}
		}},
		{"an empty ClusterIssuer list allows none", "allowedClusterIssuers: []", func(t *testing.T, objs objects) {
			for _, a := range args(t, objs) {
				if strings.HasPrefix(a, "--allowed-cluster-issuers") {
					t.Errorf("%s for an empty list", a)
				}
			}
		}},
		{"tuning flags", "jetstreamWorkers: 4\nnatsclusterWorkers: 2\nserverAnswerTimeout: 5s\nrouteCertificateRenewBefore: 720h\nallowLocalTargets: true\nleaderElection: false\npauseReconciliation: true\nextraArgs: [--zap-log-level=debug]", func(t *testing.T, objs objects) {
			a := args(t, objs)
			for _, want := range []string{"--jetstream-workers=4", "--natscluster-workers=2", "--server-answer-timeout=5s", "--route-certificate-renew-before=720h", "--allow-local-targets", "--pause-reconciliation", "--zap-log-level=debug"} {
				if !slices.Contains(a, want) {
					t.Errorf("no %s in %v", want, a)
				}
			}
			if slices.Contains(a, "--leader-elect") {
				t.Error("--leader-elect with leaderElection: false")
			}
		}},
		{"metrics off: no endpoint, no port", "metrics: {enabled: false}", func(t *testing.T, objs objects) {
			if a := args(t, objs); !slices.Contains(a, "--metrics-bind-address=0") {
				t.Errorf("metrics still bound: %v", a)
			}
			for _, p := range operatorContainer(t, objs)["ports"].([]any) {
				if p.(map[string]any)["name"] == "metrics" {
					t.Error("metrics port still declared")
				}
			}
		}},
		{"metrics port", "metrics: {port: 9443, service: {enabled: true}}", func(t *testing.T, objs objects) {
			if a := args(t, objs); !slices.Contains(a, "--metrics-bind-address=:9443") {
				t.Errorf("%v", a)
			}
			svc := objs["Service/"+operatorNamespace+"/kubenats-metrics"]
			if svc == nil || field(svc, "spec.ports").([]any)[0].(map[string]any)["port"] != float64(9443) {
				t.Errorf("metrics Service %v", svc)
			}
			if _, ok := objs["ServiceMonitor/"+operatorNamespace+"/kubenats"]; ok {
				t.Error("a ServiceMonitor nobody asked for")
			}
		}},
		{"a ServiceMonitor brings its Service", "metrics: {serviceMonitor: {enabled: true}}", func(t *testing.T, objs objects) {
			for _, k := range []string{"Service/" + operatorNamespace + "/kubenats-metrics", "ServiceMonitor/" + operatorNamespace + "/kubenats"} {
				if _, ok := objs[k]; !ok {
					t.Errorf("no %s", k)
				}
			}
		}},
		{"no CRDs", "crds: {install: false}", func(t *testing.T, objs objects) {
			if crds := objs.of("CustomResourceDefinition"); len(crds) > 0 {
				t.Errorf("%v", crds)
			}
		}},
		{"no admission policies", "admissionPolicies: {install: false}", func(t *testing.T, objs objects) {
			if p := append(objs.of("ValidatingAdmissionPolicy"), objs.of("MutatingAdmissionPolicy")...); len(p) > 0 {
				t.Errorf("%v", p)
			}
		}},
		{"no dashboards", "grafanaDashboards: {enabled: false}", func(t *testing.T, objs objects) {
			if cms := objs.of("ConfigMap"); len(cms) > 0 {
				t.Errorf("%v", cms)
			}
		}},
		{"a NetworkPolicy admits metrics only from where it is told", "networkPolicy: {enabled: true, metricsFrom: [{namespaceSelector: {matchLabels: {name: monitoring}}}]}", func(t *testing.T, objs objects) {
			np := objs["NetworkPolicy/"+operatorNamespace+"/kubenats"]
			if np == nil {
				t.Fatal("no NetworkPolicy")
			}
			rule := field(np, "spec.ingress").([]any)[0].(map[string]any)
			if rule["from"] == nil || rule["ports"].([]any)[0].(map[string]any)["port"] != float64(8443) {
				t.Errorf("ingress %v", rule)
			}
		}},
		{"a NetworkPolicy with metrics and webhook off admits nothing", "networkPolicy: {enabled: true}\nmetrics: {enabled: false}\nwebhook: {enabled: false}", func(t *testing.T, objs objects) {
			np := objs["NetworkPolicy/"+operatorNamespace+"/kubenats"]
			if np == nil || len(field(np, "spec.ingress").([]any)) != 0 {
				t.Errorf("%v", np)
			}
		}},
		{"a NetworkPolicy admits the webhook only from where it is told", "networkPolicy: {enabled: true, webhookFrom: [{ipBlock: {cidr: 10.0.0.0/24}}]}\nmetrics: {enabled: false}", func(t *testing.T, objs objects) {
			rules := field(objs["NetworkPolicy/"+operatorNamespace+"/kubenats"], "spec.ingress").([]any)
			rule := rules[0].(map[string]any)
			if len(rules) != 1 || rule["from"] == nil || rule["ports"].([]any)[0].(map[string]any)["port"] != float64(9443) {
				t.Errorf("ingress %v", rules)
			}
		}},
		{"the webhook turned off", "webhook: {enabled: false}", func(t *testing.T, objs objects) {
			webhookOff(t, objs)
		}},
		{"no webhook in namespaced mode", "watchNamespaces: [team-a]", func(t *testing.T, objs objects) {
			webhookOff(t, objs)
		}},
		{"scheduling", "nodeSelector: {pool: system}\ntolerations: [{key: system, operator: Exists}]\npriorityClassName: system-cluster-critical\npodAnnotations: {a: b}\npodLabels: {team: platform}", func(t *testing.T, objs objects) {
			spec := field(objs["Deployment/"+operatorNamespace+"/kubenats"], "spec.template").(map[string]any)
			if field(spec, "spec.nodeSelector.pool") != "system" || field(spec, "spec.priorityClassName") != "system-cluster-critical" ||
				field(spec, "metadata.annotations.a") != "b" || field(spec, "metadata.labels.team") != "platform" || field(spec, "spec.tolerations") == nil {
				t.Errorf("%v", spec)
			}
			// The selector's label stays: podLabels add, never replace.
			if field(spec, "metadata.labels").(map[string]any)["app.kubernetes.io/name"] != "kubenats" {
				t.Error("the selector's label is gone")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, mustRender(t, operatorNamespace, tc.values)) })
	}
}

// TestAnotherReleaseNamespace: installed elsewhere than kubenats-system,
// nothing names kubenats-system any more: the ServiceAccount, every
// binding's subject, the admission policy that knows the operator by its
// user name, and the CRD's default for the operator's namespace in
// NatsCluster NetworkPolicies all follow the release namespace. A chart
// that kept one of them would leave the operator without its rights, or
// confined by a policy that names someone else.
//
// Careless variant run: hack/genchart without its namespace replacement
// fails here, naming each object that still says kubenats-system.
func TestAnotherReleaseNamespace(t *testing.T) {
	objs := mustRender(t, "nats-operator", "watchNamespaces: [apps]")
	for _, k := range objs.keys() {
		if strings.Contains(mustJSON(objs[k]), operatorNamespace) {
			t.Errorf("%s still names %s", k, operatorNamespace)
		}
	}
	if _, ok := objs["ServiceAccount/nats-operator/kubenats"]; !ok {
		t.Error("no ServiceAccount in the release namespace")
	}
	policy := mustJSON(objs["ValidatingAdmissionPolicy//kubenats-operator-writes"])
	if !strings.Contains(policy, "system:serviceaccount:nats-operator:kubenats") {
		t.Error("the operator-writes policy does not name the operator's user in the release namespace")
	}
}

// webhookOff: neither the webhook's configuration nor its Service, and the
// operator told not to serve it.
func webhookOff(t *testing.T, objs objects) {
	t.Helper()
	for _, k := range []string{"ValidatingWebhookConfiguration//kubenats", "Service/" + operatorNamespace + "/kubenats-webhook"} {
		if objs[k] != nil {
			t.Errorf("%s is installed", k)
		}
	}
	args := field(objs["Deployment/"+operatorNamespace+"/kubenats"], "spec.template.spec.containers").([]any)[0].(map[string]any)["args"].([]any)
	if !slices.Contains(args, any("--webhook-bind-address=0")) {
		t.Errorf("args %v", args)
	}
}
