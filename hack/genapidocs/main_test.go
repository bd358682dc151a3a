package main

import (
	"bytes"
	"strings"
	"testing"
)

func render(t *testing.T) string {
	t.Helper()
	pkg, err := loadPackage("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeReference(&b, pkg, "testdata/fixture")
	return b.String()
}

// TestReferenceShowsEveryMarker: each line is what a reader must find for
// one shape of the fixture: the kind's row, an inline field listed as the
// object's own, defaults and bounds, an enum's values, a pipe escaped in a
// table cell, "<name>" kept from being read as HTML, and an unknown marker
// printed as written rather than dropped.
func TestReferenceShowsEveryMarker(t *testing.T) {
	doc := render(t)
	for _, want := range []string{
		"| [`Widget`](#widget) | `wd` | `fixtures` | Widget is a fixture kind. |",
		"`apiVersion: example.io/v1`, `kind: Widget`; status is a subresource.",
		"| `spec` | [`WidgetSpec`](#widgetspec) |  |",
		"The fields of [`Common`](#common) are inline",
		"| `size` (optional) | `int32` | Size of the &lt;name&gt;-widget.<br>Default: `3`<br>Minimum: 0<br>Maximum: 9 |",
		"| `mode` | [`Mode`](#mode) | Mode picks the speed.<br>Default: `fast` |",
		"Each item's pattern: `^[a-z\\|]+$`",
		"`+kubebuilder:validation:SomethingNew=1`",
		"List type: `set`",
		"- One of: `fast`, `slow`",
		"- `fast`: ModeFast runs fast.",
		"- Rule: `self.size > 0 || self.size == 0`; refused otherwise: \"never refused | with a pipe\"",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("reference lacks %q\n%s", want, doc)
		}
	}
	for _, unwanted := range []string{"hidden", "### Unused", "## WidgetList", "### Widget\n"} {
		if strings.Contains(doc, unwanted) {
			t.Errorf("reference has %q", unwanted)
		}
	}
}

// TestReferenceIsStable: verify-generate compares the committed file with a
// fresh run, so two runs must agree byte for byte.
func TestReferenceIsStable(t *testing.T) {
	if a, b := render(t), render(t); a != b {
		t.Error("two runs differ")
	}
}
