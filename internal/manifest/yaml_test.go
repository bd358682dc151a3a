package manifest

import (
	"strings"
	"testing"
)

func TestDocuments(t *testing.T) {
	in := "---\n# a comment only\n---\na: 1\n---\n\n---\nb: 2\n"
	docs, err := Documents([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !strings.Contains(string(docs[0]), "a: 1") || !strings.Contains(string(docs[1]), "b: 2") {
		t.Fatalf("Documents = %q, want the two non-empty documents", docs)
	}
	if _, err := Documents([]byte("a: [1\n")); err == nil {
		t.Fatal("broken YAML: want an error")
	}
}
