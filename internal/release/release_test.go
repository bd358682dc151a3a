package release

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestInstallsFollowTheImageReference: dist/install.yaml (through
// config/manager's kustomization) and the chart (its values' repository
// and its appVersion, the default tag) run the image `make image` builds.
// A release that bumps the version here and forgets the chart fails.
func TestInstallsFollowTheImageReference(t *testing.T) {
	var k struct {
		Images []struct {
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	readYAML(t, "../../config/manager/kustomization.yaml", &k)
	if len(k.Images) != 1 || k.Images[0].NewName != Repository || k.Images[0].NewTag != Version {
		t.Errorf("config/manager installs %+v, want %s", k.Images, Image)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	readYAML(t, "../../charts/kubenats/Chart.yaml", &chart)
	if chart.AppVersion != Version {
		t.Errorf("the chart's appVersion is %q, want %q", chart.AppVersion, Version)
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"image"`
	}
	readYAML(t, "../../charts/kubenats/values.yaml", &values)
	if values.Image.Repository != Repository || values.Image.Tag != "" {
		t.Errorf("the chart's image is %+v, want %s with the appVersion as tag", values.Image, Repository)
	}
}
