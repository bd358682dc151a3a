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
	admin, err := env.ControlPlane.AddUser(envtest.User{Name: "loopback:" + component, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, component+".kubeconfig")
	return path, os.WriteFile(path, kubeconfig, 0o600)
}
