package manifest

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// WriteYAML prints objs as a multi-document YAML stream. Keys are sorted, so
// the same objects always print byte for byte the same.
func WriteYAML(w io.Writer, objs ...runtime.Object) error {
	for _, obj := range objs {
		u, err := Unstructured(obj)
		if err != nil {
			return err
		}
		out, err := yaml.Marshal(u.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", out); err != nil {
			return err
		}
	}
	return nil
}
