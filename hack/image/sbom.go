package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The SBOM is an SPDX 2.3 document of the Go modules linked into the
// binary, read from the build information the Go toolchain embeds (what
// `go version -m` prints): exactly what ships, not what go.mod lists.

type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string            `json:"name"`
	SPDXID           string            `json:"SPDXID"`
	VersionInfo      string            `json:"versionInfo"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	Comment          string            `json:"comment,omitempty"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs,omitempty"`
}

type spdxExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// sbom describes the modules of the binary at path. created is the
// commit's time, so that the document, too, is the same on every build.
func sbom(path, version, revision string, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	main := spdxPackage{
		Name: info.Main.Path, SPDXID: "SPDXRef-Package-main", VersionInfo: version,
		DownloadLocation: "NOASSERTION",
		ExternalRefs:     []spdxExternalRef{purl(info.Main.Path, version)},
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              "kubenats " + version,
		DocumentNamespace: "https://github.com/kubenats/kubenats/sbom/" + version + "/" + revision,
		CreationInfo: spdxCreationInfo{
			Created:  created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: kubenats-hack-image", "Organization: kubenats"},
		},
		Packages: []spdxPackage{main, {
			Name: "go", SPDXID: "SPDXRef-Package-go-toolchain", VersionInfo: strings.TrimPrefix(info.GoVersion, "go"),
			DownloadLocation: "NOASSERTION",
			ExternalRefs:     []spdxExternalRef{purl("stdlib", info.GoVersion)},
		}},
		Relationships: []spdxRelationship{
			{"SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-main"},
			{"SPDXRef-Package-main", "DEPENDS_ON", "SPDXRef-Package-go-toolchain"},
		},
	}
	deps := info.Deps
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	for i, d := range deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		p := spdxPackage{
			Name: m.Path, SPDXID: fmt.Sprintf("SPDXRef-Package-%d", i), VersionInfo: m.Version,
			DownloadLocation: "NOASSERTION",
			ExternalRefs:     []spdxExternalRef{purl(m.Path, m.Version)},
		}
		if m.Sum != "" {
			// go.sum's hash of the module's tree (h1:), as the Go
			// checksum database records it: not a file checksum, so not
			// an SPDX checksum.
			p.Comment = "go.sum " + m.Sum
		}
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-Package-main", "DEPENDS_ON", p.SPDXID})
	}
	return json.MarshalIndent(doc, "", "  ")
}

func purl(path, version string) spdxExternalRef {
	return spdxExternalRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + path + "@" + version}
}
