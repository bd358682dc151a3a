// Package rbac gives a test tier the operator's shipped identity: the
// ServiceAccount and RBAC of config/rbac, installed as dist/install.yaml
// would, and a rest.Config that acts as that ServiceAccount. An operator
// started with it has exactly the permissions users grant it, so a missing
// one fails a test instead of passing under the admin's.
package rbac

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manifest"
)

// The operator's ServiceAccount, as config/rbac names it.
const (
	Namespace      = "kubenats-system"
	ServiceAccount = "kubenats"
)

// User is the ServiceAccount's user name in the API server.
var User = "system:serviceaccount:" + Namespace + ":" + ServiceAccount

// Groups are the groups the API server puts the ServiceAccount in.
var Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + Namespace, "system:authenticated"}

// Install creates the operator's namespace and every object of
// <root>/config/rbac (its kustomization's resources), with admin, a client
// with the rights to do so: the cluster-wide install.
func Install(ctx context.Context, admin client.Client, root string) error {
	return install(ctx, admin, filepath.Join(root, "config", "rbac"), nil, nil)
}

// InstallNamespaced creates what config/namespaced grants instead: the
// objects of config/rbac but the ClusterRoleBinding of the manager's role,
// and the overlay's own, with its example namespaces renamed (team-a to
// rename["team-a"], ...).
func InstallNamespaced(ctx context.Context, admin client.Client, root string, rename map[string]string) error {
	skip := func(u *unstructured.Unstructured) bool {
		return u.GetKind() == "ClusterRoleBinding" && u.GetName() == "kubenats-manager"
	}
	if err := install(ctx, admin, filepath.Join(root, "config", "rbac"), nil, skip); err != nil {
		return err
	}
	return install(ctx, admin, filepath.Join(root, "config", "namespaced"), rename, nil)
}

// install creates the objects of the local files dir's kustomization
// names, with the words of rename replaced, but those skip picks.
func install(ctx context.Context, admin client.Client, dir string, rename map[string]string, skip func(*unstructured.Unstructured) bool) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := admin.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	files, err := kustomizationResources(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasPrefix(f, "..") {
			continue // another kustomization, installed by its own call
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		for from, to := range rename {
			data = bytes.ReplaceAll(data, []byte(from), []byte(to))
		}
		docs, err := manifest.Documents(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, doc := range docs {
			var u unstructured.Unstructured
			if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if skip != nil && skip(&u) {
				continue
			}
			if err := admin.Create(ctx, &u); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: %s %s: %w", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
	return nil
}

// kustomizationResources lists the files a kustomization.yaml names.
func kustomizationResources(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, err
	}
	return k.Resources, nil
}

// Config is admin's config acting as the operator's ServiceAccount: the API
// server authorizes every request by the ServiceAccount's RBAC alone.
func Config(admin *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: User, Groups: Groups}
	return cfg
}

// EnforceOwnerReferences turns on the API server's
// OwnerReferencesPermissionEnforcement admission plugin, as hardened
// clusters do: an owner reference that blocks its owner's deletion then
// needs update on the owner's finalizers, which the operator's role must
// grant for every child it makes.
func EnforceOwnerReferences(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Set("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
}
