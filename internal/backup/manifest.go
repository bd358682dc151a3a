package backup

import "github.com/kubenats/kubenats/internal/backupreport"

// Manifest is what a backup holds; its type lives where the operator,
// which must not link this package, reads it too.
type Manifest = backupreport.Manifest

// ManifestFile is where a backup taken by kubenats keeps its Manifest,
// beside natscli's two files (which natscli ignores). A backup without
// one (taken by natscli) restores all the same, unchecked.
const ManifestFile = "kubenats-manifest.json"
