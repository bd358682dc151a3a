package envtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The API server answers every refusal below with 422 Unprocessable Entity,
// reason Invalid: the OpenAPI schema and the CEL rules of the CRD do, and so
// does the ValidatingAdmissionPolicy, since its validation declares reason:
// Invalid. (The policy's text still reads `... is forbidden:
// ValidatingAdmissionPolicy ... denied request`, but IsForbidden is false.)

// quantity is a *resource.Quantity of a literal.
func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// rawJSON is a spec.config value.
func rawJSON(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// assertInvalid checks that err is the API server's 422 refusal and that its
// text holds every one of want.
func assertInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("accepted by the API server, want it refused with %q", want)
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("refused with reason %q (code %d), want reason Invalid (422): %v",
			apierrors.ReasonForError(err), statusCode(err), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

func statusCode(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

func TestValidationRejectsInvalidSpecs(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	cases := []struct {
		name string // also the object's name, unless objName is set
		// objName overrides the object's name.
		objName string
		edit    func(*spec)
		want    []string // substrings of the error a user reads
	}{
		// A takeover keeps the release's names.
		{name: "takeover-of-another-release",
			edit: func(s *spec) {
				s.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: "nats"}
				s.Auth.Mode = v1alpha1.AuthNone
			},
			want: []string{"takeover.helmRelease must be the NatsCluster's name"}},
		{name: "takeover-in-mode-users",
			edit: func(s *spec) { s.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: "takeover-in-mode-users"} },
			want: []string{"takeover needs auth.mode none or token"}},

		// Replicas.
		{name: "replicas-zero",
			edit: func(s *spec) { s.Replicas = ptr.To[int32](0) },
			want: []string{"spec.replicas", "should be greater than or equal to 1"}},
		{name: "replicas-negative",
			edit: func(s *spec) { s.Replicas = ptr.To[int32](-1) },
			want: []string{"spec.replicas", "should be greater than or equal to 1"}},
		{name: "replicas-100",
			edit: func(s *spec) { s.Replicas = ptr.To[int32](100) },
			want: []string{"spec.replicas", "should be less than or equal to 99"}},
		{name: "replicas-2-jetstream-default",
			edit: func(s *spec) { s.Replicas = ptr.To[int32](2) },
			want: []string{"2 replicas cannot form a JetStream quorum"}},
		{name: "replicas-2-jetstream-explicitly-on",
			edit: func(s *spec) { s.Replicas = ptr.To[int32](2); s.JetStream.Enabled = ptr.To(true) },
			want: []string{"2 replicas cannot form a JetStream quorum"}},

		// Version and image.
		{name: "version-latest",
			edit: func(s *spec) { s.Version = "latest" },
			want: []string{"spec.version", `Invalid value: "latest"`, "should match"}},
		{name: "version-two-parts",
			edit: func(s *spec) { s.Version = "2.15" },
			want: []string{"spec.version", `Invalid value: "2.15"`, "should match"}},
		{name: "version-v-prefix",
			edit: func(s *spec) { s.Version = "v2.15.3" },
			want: []string{"spec.version", "should match"}},
		{name: "image-too-long",
			edit: func(s *spec) { s.Image = "registry.example.com/" + strings.Repeat("n", 492) }, // 513 bytes
			want: []string{"spec.image", "Too long", "512"}},

		// TLS.
		// The route CA is the operator's own: no issuer is ever asked for
		// one, whatever issuer is named and however (routeIssuerRefused
		// holds it over an update too).
		{name: "route-issuer",
			edit: func(s *spec) { s.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: "ca"} },
			want: []string{"spec.tls.routes.issuerRef", routeIssuerRefused}},
		{name: "route-cluster-issuer",
			edit: func(s *spec) {
				s.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: "platform-ca", Kind: "ClusterIssuer"}
			},
			want: []string{"spec.tls.routes.issuerRef", routeIssuerRefused}},
		{name: "route-tls-off-with-a-secret",
			edit: func(s *spec) {
				off := false
				s.TLS.Routes.Enabled, s.TLS.Routes.SecretName = &off, "mine"
			},
			want: []string{"routes: secretName needs route TLS enabled"}},
		{name: "client-verify-without-a-source",
			edit: func(s *spec) { s.TLS.Client = &v1alpha1.ClientTLSSpec{Verify: true} },
			want: []string{"verify needs client certificates from your own CA"}},
		{name: "client-tls-with-both-sources",
			edit: func(s *spec) {
				s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "s", IssuerRef: &v1alpha1.IssuerRef{Name: "ca"}}
			},
			want: []string{"client TLS: set secretName or issuerRef, not both"}},
		{name: "client-plaintext-and-handshake-first",
			edit: func(s *spec) {
				s.TLS.Client = &v1alpha1.ClientTLSSpec{HandshakeFirst: true, AllowPlaintext: ptr.To(true)}
			},
			want: []string{"handshakeFirst refuses clients that do not start with TLS"}},
		{name: "issuer-of-an-unknown-kind",
			edit: func(s *spec) {
				s.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: "ca", Kind: "Vault"}}
			},
			want: []string{"spec.tls.client.issuerRef.kind", `Unsupported value: "Vault"`}},

		// Service.
		{name: "service-type-external",
			edit: func(s *spec) { s.Service.Type = "External" },
			want: []string{"spec.service.type", `Unsupported value: "External"`}},
		{name: "lb-source-ranges-without-type",
			edit: func(s *spec) { s.Service.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} },
			want: []string{"loadBalancerSourceRanges needs type LoadBalancer"}},
		{name: "lb-source-ranges-with-clusterip",
			edit: func(s *spec) {
				s.Service.Type = "ClusterIP"
				s.Service.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
			},
			want: []string{"loadBalancerSourceRanges needs type LoadBalancer"}},
		{name: "lb-source-range-not-a-cidr",
			edit: func(s *spec) {
				s.Service.Type = "LoadBalancer"
				s.Service.LoadBalancerSourceRanges = []string{"10.0.0.0"}
			},
			want: []string{"spec.service.loadBalancerSourceRanges", "must be CIDRs"}},
		{name: "lb-source-range-out-of-range",
			edit: func(s *spec) {
				s.Service.Type = "LoadBalancer"
				s.Service.LoadBalancerSourceRanges = []string{"999.1.1.1/999"}
			},
			want: []string{"spec.service.loadBalancerSourceRanges", "must be CIDRs"}},
		{name: "lb-class-empty",
			edit: func(s *spec) {
				s.Service.Type = "LoadBalancer"
				s.Service.LoadBalancerClass = ptr.To("")
			},
			want: []string{"spec.service.loadBalancerClass"}},
		{name: "allowed-namespace-not-a-name",
			edit: func(s *spec) { s.JetStream.AllowedNamespaces = []string{"Bad_NS!"} },
			want: []string{"spec.jetstream.allowedNamespaces[0]"}},
		{name: "lb-class-with-nodeport",
			edit: func(s *spec) { s.Service.Type = "NodePort"; s.Service.LoadBalancerClass = ptr.To("example.com/lb") },
			want: []string{"loadBalancerClass needs type LoadBalancer"}},
		{name: "external-endpoint-http",
			edit: func(s *spec) { s.Service.ExternalEndpoint = "http://x" },
			want: []string{"spec.service.externalEndpoint", `Invalid value: "http://x"`, "should match"}},
		{name: "external-endpoint-with-path",
			edit: func(s *spec) { s.Service.ExternalEndpoint = "nats://x/y" },
			want: []string{"spec.service.externalEndpoint", "should match"}},

		// Auth.
		{name: "auth-mode-unknown",
			edit: func(s *spec) { s.Auth.Mode = "ldap" },
			want: []string{"spec.auth.mode", `Unsupported value: "ldap"`}},
		{name: "auth-secretref-with-mode-none",
			edit: func(s *spec) {
				s.Auth.Mode = v1alpha1.AuthNone
				s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "creds"}
			},
			want: []string{"spec.auth", "secretRef makes no sense with mode none"}},
		{name: "auth-user-with-mode-token",
			edit: func(s *spec) { s.Auth.Mode = v1alpha1.AuthToken; s.Auth.User = "app" },
			want: []string{"spec.auth", "user applies to mode users only"}},
		{name: "auth-user-with-mode-none",
			edit: func(s *spec) { s.Auth.Mode = v1alpha1.AuthNone; s.Auth.User = "app" },
			want: []string{"spec.auth", "user applies to mode users only"}},
		{name: "auth-user-starts-with-digit",
			edit: func(s *spec) { s.Auth.User = "1bad" },
			want: []string{"spec.auth.user", `Invalid value: "1bad"`, "should match"}},
		{name: "auth-secretref-name-uppercase",
			edit: func(s *spec) { s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "MyCreds"} },
			want: []string{"spec.auth.secretRef.name", `Invalid value: "MyCreds"`, "should match"}},
		{name: "auth-secretref-key-with-slash",
			edit: func(s *spec) { s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "creds", Key: "a/b"} },
			want: []string{"spec.auth.secretRef.key", "should match"}},

		// JetStream.
		{name: "jetstream-domain-with-space",
			edit: func(s *spec) { s.JetStream.Domain = "a b" },
			want: []string{"spec.jetstream.domain", `Invalid value: "a b"`, "should match"}},
		{name: "filestore-size-zero",
			edit: func(s *spec) { s.JetStream.FileStore.Size = quantity("0") },
			want: []string{"spec.jetstream.fileStore.size", "fileStore.size must be positive"}},
		{name: "filestore-size-negative",
			edit: func(s *spec) { s.JetStream.FileStore.Size = quantity("-1Gi") },
			want: []string{"spec.jetstream.fileStore.size", "fileStore.size must be positive"}},
		{name: "filestore-pvc-retention-keep",
			edit: func(s *spec) { s.JetStream.FileStore.PVCRetentionPolicy = "Keep" },
			want: []string{"spec.jetstream.fileStore.pvcRetentionPolicy", `Unsupported value: "Keep"`}},
		{name: "memorystore-size-zero",
			edit: func(s *spec) { s.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: *quantity("0")} },
			want: []string{"spec.jetstream.memoryStore.size", "memoryStore.size must be positive"}},
		// Sizes resource.Quantity.Value() cannot hold (1E19 reads as 0: an
		// unlimited store, GOMEMLIMIT=0), and memory too small to run in.
		{name: "filestore-size-1e19",
			edit: func(s *spec) { s.JetStream.FileStore.Size = quantity("1E19") },
			want: []string{"spec.jetstream.fileStore.size", "fileStore.size must be at most 1Pi"}},
		{name: "filestore-size-2pi",
			edit: func(s *spec) { s.JetStream.FileStore.Size = quantity("2Pi") },
			want: []string{"fileStore.size must be at most 1Pi"}},
		{name: "memorystore-size-1e19",
			edit: func(s *spec) { s.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: *quantity("1E19")} },
			want: []string{"spec.jetstream.memoryStore.size", "memoryStore.size must be at most 16Ti"}},
		{name: "memory-limit-1e19",
			edit: func(s *spec) {
				s.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *quantity("1E19")}}
			},
			want: []string{"spec.resources", "resources.limits.memory must be between 64Mi and 16Ti"}},
		{name: "memory-limit-4-bytes",
			edit: func(s *spec) {
				s.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *quantity("4")}}
			},
			want: []string{"resources.limits.memory must be between 64Mi and 16Ti"}},
		{name: "allowed-namespaces-duplicate",
			edit: func(s *spec) { s.JetStream.AllowedNamespaces = []string{"team-a", "team-b", "team-a"} },
			want: []string{"spec.jetstream.allowedNamespaces[2]", `Duplicate value: "team-a"`}},

		// Pod template.
		{name: "podtemplate-label-app-name",
			edit: func(s *spec) { s.PodTemplate.Labels = map[string]string{"app.kubernetes.io/name": "mine"} },
			want: []string{"spec.podTemplate", "podTemplate.labels may not set app.kubernetes.io/ labels"}},
		{name: "podtemplate-label-app-instance",
			edit: func(s *spec) {
				s.PodTemplate.Labels = map[string]string{"team": "a", "app.kubernetes.io/instance": "x"}
			},
			want: []string{"podTemplate.labels may not set app.kubernetes.io/ labels"}},

		// spec.config: the ValidatingAdmissionPolicy.
		{name: "config-port",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"port": rawJSON("4333")} },
			want: []string{"ValidatingAdmissionPolicy 'kubenats-natscluster-config-keys'",
				"spec.config.port is not an allowed passthrough setting", "spec.config accepts only connect_error_reports, debug"}},
		{name: "config-jetstream-mixed-case",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"JetStream": rawJSON(`{"max_mem":"1G"}`)} },
			want: []string{"spec.config.JetStream is not an allowed passthrough setting"}},
		{name: "config-authorization-beside-an-allowed-key",
			edit: func(s *spec) {
				s.Config = map[string]apiextensionsv1.JSON{
					"max_payload":   rawJSON("1048576"),
					"authorization": rawJSON(`{"token":"t"}`),
				}
			},
			want: []string{"spec.config.authorization is not an allowed passthrough setting"}},
		{name: "config-alias-monitor-port",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"Monitor_Port": rawJSON("8222")} },
			want: []string{"spec.config.Monitor_Port is not an allowed passthrough setting"}},
		// The keys the issue names: paths, listeners and bridges, authentication.
		{name: "config-operator-dev-zero",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"operator": rawJSON(`"/dev/zero"`)} },
			want: []string{"spec.config.operator is not an allowed passthrough setting"}},
		{name: "config-include",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"include": rawJSON(`"/dev/zero"`)} },
			want: []string{"spec.config.include is not an allowed passthrough setting"}},
		{name: "config-no-auth-user",
			edit: func(s *spec) {
				s.Config = map[string]apiextensionsv1.JSON{"NO_AUTH_USER": rawJSON(`"kubenats-system"`)}
			},
			want: []string{"spec.config.NO_AUTH_USER is not an allowed passthrough setting"}},
		{name: "config-leafnodes",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"leafnodes": rawJSON(`{"port": 7422}`)} },
			want: []string{"spec.config.leafnodes is not an allowed passthrough setting"}},
		{name: "config-gateway",
			edit: func(s *spec) {
				s.Config = map[string]apiextensionsv1.JSON{"gateway": rawJSON(`{"name": "x", "port": 7222}`)}
			},
			want: []string{"spec.config.gateway is not an allowed passthrough setting"}},
		{name: "config-websocket",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"websocket": rawJSON(`{"port": 8443}`)} },
			want: []string{"spec.config.websocket is not an allowed passthrough setting"}},
		{name: "config-mqtt",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"mqtt": rawJSON(`{"port": 1883}`)} },
			want: []string{"spec.config.mqtt is not an allowed passthrough setting"}},
		{name: "config-resolver",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"resolver": rawJSON(`"MEMORY"`)} },
			want: []string{"spec.config.resolver is not an allowed passthrough setting"}},
		{name: "config-prof-port",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"prof_port": rawJSON("6060")} },
			want: []string{"spec.config.prof_port is not an allowed passthrough setting"}},
		{name: "config-log-file",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"log_file": rawJSON(`"/dev/zero"`)} },
			want: []string{"spec.config.log_file is not an allowed passthrough setting"}},
		// Folding as nats-server folds: case only. '-' is not '_', and a rune
		// strings.ToLower would fold onto 'k' matches nothing.
		{name: "config-dash-spelling",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"max-payload": rawJSON("1048576")} },
			want: []string{"spec.config.max-payload is not an allowed passthrough setting"}},
		{name: "config-kelvin-sign",
			edit: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"max_sub_to\u212Aens": rawJSON("8")} },
			want: []string{"spec.config.max_sub_to\u212Aens is not an allowed passthrough setting"}},
		{name: "config-same-key-twice-by-case",
			edit: func(s *spec) {
				s.Config = map[string]apiextensionsv1.JSON{"debug": rawJSON("true"), "DEBUG": rawJSON("false")}
			},
			want: []string{"name the same nats-server setting"}},
		{name: "config-too-many-keys",
			edit: func(s *spec) {
				s.Config = map[string]apiextensionsv1.JSON{}
				for i := range 65 {
					s.Config[fmt.Sprintf("x_%02d", i)] = rawJSON("1")
				}
			},
			want: []string{"spec.config", "must have at most 64 items"}},

		// Metadata.
		{name: "name-53-characters",
			objName: "n" + strings.Repeat("a", 52),
			want:    []string{"name may be at most 52 characters"}},
	}
	if len(cases) < 24 {
		t.Fatalf("only %d cases", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.name
			if tc.objName != "" {
				name = tc.objName
			}
			if seen[name] {
				t.Fatalf("object name %q used twice", name)
			}
			seen[name] = true
			var edits []func(*spec)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			c := natsCluster(ns, name, edits...)
			err := k8s.Create(ctx(t), c)
			if err == nil {
				// Leave nothing behind for the operator to reconcile.
				_ = k8s.Delete(ctx(t), c)
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}

func TestValidationRejectsInvalidUpdates(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	cases := []struct {
		name   string
		create func(*spec)
		update func(*spec)
		want   []string // nil: the update must be accepted
	}{
		// fileStore.size may grow but not shrink.
		{name: "filestore-shrink",
			create: func(s *spec) { s.JetStream.FileStore.Size = quantity("10Gi") },
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("5Gi") },
			want:   []string{"spec.jetstream.fileStore", "fileStore.size may grow but not shrink"}},
		{name: "filestore-shrink-from-default",
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("9Gi") },
			want:   []string{"fileStore.size may grow but not shrink"}},
		{name: "filestore-shrink-in-other-units",
			create: func(s *spec) { s.JetStream.FileStore.Size = quantity("1Gi") },
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("1000M") }, // 1e9 < 2^30
			want:   []string{"fileStore.size may grow but not shrink"}},
		{name: "filestore-grow",
			create: func(s *spec) { s.JetStream.FileStore.Size = quantity("10Gi") },
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("20Gi") }},
		{name: "filestore-same-size-in-other-units",
			create: func(s *spec) { s.JetStream.FileStore.Size = quantity("1Gi") },
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("1024Mi") }},

		// fileStore.storageClassName is immutable.
		{name: "storageclass-change",
			create: func(s *spec) { s.JetStream.FileStore.StorageClassName = ptr.To("a") },
			update: func(s *spec) { s.JetStream.FileStore.StorageClassName = ptr.To("b") },
			want:   []string{"spec.jetstream.fileStore", "fileStore.storageClassName is immutable"}},
		{name: "storageclass-unset",
			create: func(s *spec) { s.JetStream.FileStore.StorageClassName = ptr.To("a") },
			update: func(s *spec) { s.JetStream.FileStore.StorageClassName = nil },
			want:   []string{"fileStore.storageClassName is immutable"}},
		{name: "storageclass-set-later",
			update: func(s *spec) { s.JetStream.FileStore.StorageClassName = ptr.To("a") },
			want:   []string{"fileStore.storageClassName is immutable"}},
		{name: "storageclass-unchanged-while-size-grows",
			create: func(s *spec) { s.JetStream.FileStore.StorageClassName = ptr.To("a") },
			update: func(s *spec) { s.JetStream.FileStore.Size = quantity("11Gi") }},

		// spec.takeover is set at creation and kept: the StatefulSet's
		// selector and claims follow it.
		{name: "takeover-added",
			create: func(s *spec) { s.Auth.Mode = v1alpha1.AuthNone },
			update: func(s *spec) { s.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: "takeover-added"} },
			want:   []string{"takeover is set when the cluster is created and then kept"}},
		{name: "takeover-removed",
			create: func(s *spec) {
				s.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: "takeover-removed"}
				s.Auth.Mode = v1alpha1.AuthNone
			},
			update: func(s *spec) { s.Takeover = nil },
			want:   []string{"takeover is set when the cluster is created and then kept"}},

		// Replicas.
		{name: "replicas-3-to-1-jetstream",
			create: func(s *spec) { s.Replicas = ptr.To[int32](3) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](1) },
			want:   []string{"a JetStream cluster cannot shrink to a single server"}},
		{name: "replicas-default-to-1-jetstream",
			update: func(s *spec) { s.Replicas = ptr.To[int32](1) },
			want:   []string{"a JetStream cluster cannot shrink to a single server"}},
		{name: "replicas-3-to-2-jetstream",
			create: func(s *spec) { s.Replicas = ptr.To[int32](3) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](2) },
			want:   []string{"2 replicas cannot form a JetStream quorum"}},
		{name: "replicas-3-to-5",
			create: func(s *spec) { s.Replicas = ptr.To[int32](3) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](5) }},
		{name: "replicas-5-to-3",
			create: func(s *spec) { s.Replicas = ptr.To[int32](5) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](3) }},
		{name: "replicas-1-to-3",
			create: func(s *spec) { s.Replicas = ptr.To[int32](1) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](3) }},
		{name: "replicas-3-to-1-without-jetstream",
			create: func(s *spec) { s.Replicas = ptr.To[int32](3); s.JetStream.Enabled = ptr.To(false) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](1) }},
		{name: "replicas-3-to-2-without-jetstream",
			create: func(s *spec) { s.Replicas = ptr.To[int32](3); s.JetStream.Enabled = ptr.To(false) },
			update: func(s *spec) { s.Replicas = ptr.To[int32](2) }},
		{name: "replicas-2-without-jetstream",
			update: func(s *spec) { s.Replicas = ptr.To[int32](2); s.JetStream.Enabled = ptr.To(false) }},

		// A route issuer cannot be added to a cluster either.
		{name: "route-issuer-added",
			update: func(s *spec) { s.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: "ca"} },
			want:   []string{"spec.tls.routes.issuerRef", routeIssuerRefused}},

		// spec.config is checked on update too.
		{name: "config-max-payload",
			update: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"max_payload": rawJSON("1048576")} }},
		{name: "config-owned-key-added",
			update: func(s *spec) { s.Config = map[string]apiextensionsv1.JSON{"server_name": rawJSON(`"x"`)} },
			want:   []string{"spec.config.server_name is not an allowed passthrough setting"}},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if seen[tc.name] {
				t.Fatalf("object name %q used twice", tc.name)
			}
			seen[tc.name] = true
			var edits []func(*spec)
			if tc.create != nil {
				edits = append(edits, tc.create)
			}
			c := natsCluster(ns, tc.name, edits...)
			if err := k8s.Create(ctx(t), c); err != nil {
				t.Fatalf("creating the valid starting point: %v", err)
			}
			t.Cleanup(func() { _ = k8s.Delete(context.Background(), c) })

			// A merge patch carries no resourceVersion, so the operator's
			// own writes (status, finalizers) cannot make it conflict.
			before := c.DeepCopy()
			tc.update(&c.Spec)
			err := k8s.Patch(ctx(t), c, client.MergeFrom(before))
			if tc.want == nil {
				if err != nil {
					t.Errorf("update refused, want it accepted: %v", err)
				}
				return
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}

// TestValidationAcceptsValidSpecs holds valid specs that a rule could
// mistake for invalid ones. They are sent as unstructured JSON, since the
// typed client always writes a Quantity as a string (while the schema,
// x-kubernetes-int-or-string, also lets a user write a plain integer) and
// always writes a spec (while a manifest may have none).
func TestValidationAcceptsValidSpecs(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cases := []struct {
		name    string
		objName string
		spec    map[string]any // nil: no spec key at all
	}{
		{name: "filestore-size-string", spec: map[string]any{
			"jetstream": map[string]any{"fileStore": map[string]any{"size": "1Gi"}}}},
		{name: "filestore-size-integer", spec: map[string]any{
			"jetstream": map[string]any{"fileStore": map[string]any{"size": int64(10737418240)}}}},
		{name: "memorystore-size-string", spec: map[string]any{
			"jetstream": map[string]any{"memoryStore": map[string]any{"size": "1Gi"}}}},
		{name: "memorystore-size-integer", spec: map[string]any{
			"jetstream": map[string]any{"memoryStore": map[string]any{"size": int64(1073741824)}}}},
		{name: "sizes-at-the-bounds", spec: map[string]any{
			"jetstream": map[string]any{"fileStore": map[string]any{"size": "1Pi"}, "memoryStore": map[string]any{"size": "16Ti"}},
			"resources": map[string]any{"limits": map[string]any{"memory": "64Mi"}, "requests": map[string]any{"memory": "64Mi"}}}},
		{name: "name-52-characters", objName: "n" + strings.Repeat("a", 51), spec: map[string]any{}},
		{name: "no-spec-key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.name
			if tc.objName != "" {
				name = tc.objName
			}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1alpha1.GroupVersion.String(),
				"kind":       "NatsCluster",
				"metadata":   map[string]any{"namespace": ns, "name": name},
			}}
			if tc.spec != nil {
				u.Object["spec"] = tc.spec
			}
			if err := k8s.Create(ctx(t), u); err != nil {
				t.Errorf("valid object %s refused: %v", asJSON(t, u.Object), err)
				return
			}
			_ = k8s.Delete(ctx(t), u)
		})
	}
}
