package render_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestConfigMapHoldsOnlyNatsConf(t *testing.T) {
	cm := find[*corev1.ConfigMap](t, renderObjects(t, cluster(), render.Inputs{}), "demo-config")
	if len(cm.Data) != 1 || cm.Data[render.ConfigKey] == "" || len(cm.BinaryData) != 0 {
		t.Errorf("ConfigMap data keys %v, binary %v; want only a non-empty %s", keys(cm.Data), cm.BinaryData, render.ConfigKey)
	}
	equal(t, "namespace", cm.Namespace, "ns")
}

// TestConfigMapReadsCredentialsFromEnv checks that nats.conf names the
// credentials by environment variable, never by value.
func TestConfigMapReadsCredentialsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        *v1alpha1.NatsCluster
		wantRefs  []string
		forbidden []string
	}{
		{"users", cluster(), []string{"$SERVER_NAME", "$NATS_PASSWORD", "$NATS_SYSTEM_PASSWORD", "$NATS_ROUTE_PASSWORD", "$NATS_ROUTE_URLS"}, []string{"$NATS_TOKEN", "token", "nats://"}},
		{"users with a secretRef", cluster(withAuthSecret("mine", "pw")), []string{"$NATS_PASSWORD", "$NATS_SYSTEM_PASSWORD"}, []string{"mine"}},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), []string{"$SERVER_NAME", "$NATS_TOKEN"}, []string{"$NATS_PASSWORD", "$NATS_SYSTEM_PASSWORD", "accounts"}},
		{"none", cluster(withAuthMode(v1alpha1.AuthNone)), []string{"$SERVER_NAME", "$NATS_ROUTE_PASSWORD"}, []string{"$NATS_PASSWORD", "$NATS_TOKEN", "$NATS_SYSTEM_PASSWORD", "accounts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := configText(t, tc.in)
			for _, ref := range tc.wantRefs {
				if !strings.Contains(text, ref) {
					t.Errorf("nats.conf does not read %s:\n%s", ref, text)
				}
			}
			for _, s := range tc.forbidden {
				if strings.Contains(text, s) {
					t.Errorf("nats.conf contains %q:\n%s", s, text)
				}
			}
		})
	}
}

// TestConfigMapCarriesNoSecretValue renders the Secrets with known values and
// checks none of them reaches the ConfigMap.
func TestConfigMapCarriesNoSecretValue(t *testing.T) {
	cred := render.Credentials{Client: "vermilionPangolinSecret", System: "cobaltNarwhalSecret"}
	for _, mode := range []v1alpha1.AuthMode{v1alpha1.AuthUsers, v1alpha1.AuthToken} {
		t.Run(string(mode), func(t *testing.T) {
			c := cluster(withAuthMode(mode))
			text := configText(t, c)
			secrets := render.Secrets(c.WithDefaults(), cred)
			if len(secrets) == 0 {
				t.Fatal("no Secrets rendered")
			}
			// The user name and the server URL are no secrets; the rest are.
			secretValues := []string{cred.Client, cred.System}
			for _, s := range secrets {
				if url := s.StringData[render.CredentialsURLKey]; strings.Contains(url, "@") {
					secretValues = append(secretValues, url)
				}
			}
			for _, v := range secretValues {
				if strings.Contains(text, v) {
					t.Errorf("nats.conf contains the secret value %q", v)
				}
			}
		})
	}
}

// TestConfigMapIsWhatThePodMounts ties the ConfigMap to the pod: the volume
// names it, and the server reads the file at the path the volume provides.
func TestConfigMapIsWhatThePodMounts(t *testing.T) {
	objs := renderObjects(t, cluster(), render.Inputs{})
	sts := find[*appsv1.StatefulSet](t, objs, "demo")
	cm := find[*corev1.ConfigMap](t, objs, "demo-config")
	spec := sts.Spec.Template.Spec

	var volume string
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil && src.ConfigMap.Name == cm.Name {
				volume = v.Name
			}
		}
	}
	if volume == "" {
		t.Fatalf("no pod volume projects ConfigMap %s", cm.Name)
	}
	for _, name := range []string{render.ServerContainerName} {
		ctr := containerNamed(t, spec, name)
		mounted := false
		for _, m := range ctr.VolumeMounts {
			if m.Name == volume && m.MountPath+"/"+render.ConfigKey == render.ConfigFile {
				mounted = true
				if !m.ReadOnly {
					t.Errorf("container %s mounts the config read-write", name)
				}
			}
		}
		if !mounted {
			t.Errorf("container %s does not mount %s so that %s exists", name, volume, render.ConfigFile)
		}
		if !strings.Contains(strings.Join(append(ctr.Command, ctr.Args...), " "), render.ConfigFile) {
			t.Errorf("container %s is not pointed at %s: %v %v", name, render.ConfigFile, ctr.Command, ctr.Args)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
