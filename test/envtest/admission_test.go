package envtest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// installAdmissionPolicy creates what config/admission holds, as
// dist/install.yaml would, and waits until the API server enforces it: a
// policy is loaded asynchronously after it is created.
func installAdmissionPolicy(ctx context.Context, root string) error {
	data, err := os.ReadFile(filepath.Join(root, "config", "admission", "policy.yaml"))
	if err != nil {
		return err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var u unstructured.Unstructured
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := k8s.Create(ctx, &u); err != nil {
			return err
		}
	}
	probe := &v1alpha1.NatsCluster{}
	probe.Namespace, probe.Name = "default", "admission-probe"
	probe.Spec.Config = map[string]apiextensionsv1.JSON{"port": {Raw: []byte("1")}}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		err := k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "spec.config.port is owned by the operator") {
			return nil // refused by the policy: it is in force
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the admission policy was not enforced within 30s")
}
