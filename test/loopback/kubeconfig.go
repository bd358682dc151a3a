package loopback

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// adminKubeconfig writes, to dir/<component>.kubeconfig, a kubeconfig for
// a member of system:masters named loopback:<component>, as the control
// plane's own components and the third-party controllers the cluster runs
// (cert-manager, Istio's injector) use, and returns its path.
func adminKubeconfig(env *envtest.Environment, dir, component string) (string, error) {
	return writeKubeconfig(env, dir, component, envtest.User{Name: "loopback:" + component, Groups: []string{"system:masters"}})
}

// UserKubeconfig writes, to <Dir>/<name>.kubeconfig, a kubeconfig that
// authenticates as user in groups (by client certificate: the API server
// takes both from it, as it takes a ServiceAccount's from its token), and
// returns its path: for a process run beside the cluster under an
// identity whose RBAC it must live with, such as the operator's binary.
func (c *Cluster) UserKubeconfig(name, user string, groups []string) (string, error) {
	return writeKubeconfig(c.plane.env, c.Dir, name, envtest.User{Name: user, Groups: groups})
}

func writeKubeconfig(env *envtest.Environment, dir, name string, user envtest.User) (string, error) {
	authn, err := env.ControlPlane.AddUser(user, nil)
	if err != nil {
		return "", err
	}
	kubeconfig, err := authn.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, os.WriteFile(path, kubeconfig, 0o600)
}
