package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

// Documents splits a multi-document YAML stream into its documents,
// leaving out empty ones (a leading "---", comments only).
func Documents(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var probe any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, err
		}
		if probe != nil {
			docs = append(docs, doc)
		}
	}
}
