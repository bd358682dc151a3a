package loopback

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Volumes are directories: emptyDir and ConfigMap/Secret volumes under the
// pod's directory, gone with the pod; claims under the harness's claims
// directory, one per claim UID, each a filesystem of the claim's size
// (claims.go), gone only with the claim.

// volumeDirs is the directory of each of the pod's volumes, by name.
func (w *podWorker) volumeDirs(pod *corev1.Pod) (map[string]string, error) {
	dirs := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			name := v.PersistentVolumeClaim.ClaimName
			claim, err := w.k.claims.PersistentVolumeClaims(pod.Namespace).Get(name)
			if err != nil {
				return nil, fmt.Errorf("volume %s: persistentvolumeclaim %q: %w", v.Name, name, err)
			}
			if claim.DeletionTimestamp != nil {
				return nil, fmt.Errorf("volume %s: persistentvolumeclaim %q is being deleted", v.Name, name)
			}
			dir, err := w.k.claimVolume(claim)
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			dirs[v.Name] = dir
		case v.ConfigMap != nil, v.Secret != nil, v.Projected != nil, v.EmptyDir != nil:
			dirs[v.Name] = filepath.Join(w.dir, "volumes", v.Name)
		case v.DownwardAPI != nil:
			// Only Istio's proxy mounts this here (its pod info): a plain
			// directory, since the proxy is the model's.
			dirs[v.Name] = filepath.Join(w.dir, "volumes", v.Name)
		default:
			return nil, fmt.Errorf("volume %s: only configMap, secret, projected (of those two), emptyDir, persistentVolumeClaim (and, for Istio's proxy, downwardAPI) volumes are supported here", v.Name)
		}
	}
	return dirs, nil
}

// containerMounts maps c's mount paths to the volume directories.
func containerMounts(c *corev1.Container, dirs map[string]string) ([]mount, error) {
	var ms []mount
	for _, vm := range c.VolumeMounts {
		dir, ok := dirs[vm.Name]
		if !ok {
			return nil, fmt.Errorf("container %s mounts volume %s, which the pod does not have", c.Name, vm.Name)
		}
		ms = append(ms, mount{container: vm.MountPath, host: filepath.Join(dir, vm.SubPath)})
	}
	sortMounts(ms)
	return ms, nil
}

// syncVolumes brings every volume directory up to date: at once the first
// time, and then a refresh delay after a change was first seen
// (volume_refresh.go). It returns when to look again for a refresh that
// is due later, zero when none is. rewrite turns a ConfigMap file's content
// into what the given container should read.
func (w *podWorker) syncVolumes(pod *corev1.Pod, dirs map[string]string, c *corev1.Container, now time.Time, rewrite func(path string, data []byte) []byte) (wake time.Time, err error) {
	type pending struct {
		dir   string
		files map[string][]byte
	}
	var stale []pending
	for _, v := range pod.Spec.Volumes {
		dir := dirs[v.Name]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return time.Time{}, err
		}
		files, fromConfigMap, err := w.volumeFiles(pod.Namespace, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if files == nil {
			continue // a directory whose content is the process's own
		}
		if mountsVolume(c, v.Name) {
			for rel, data := range files {
				if fromConfigMap[rel] {
					files[rel] = rewrite(filepath.Join(dir, rel), data)
				}
			}
		}
		// The first files, and those of a container about to (re)start, are
		// written at once: a kubelet sets a pod's volumes up before it starts
		// a container, and syncs the pod when one exits.
		if !w.sandboxReady || w.nats.run == nil {
			if _, err := writeFiles(dir, files); err != nil {
				return time.Time{}, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			continue
		}
		if differs, err := filesDiffer(dir, files); err != nil {
			return time.Time{}, fmt.Errorf("volume %s: %w", v.Name, err)
		} else if differs {
			stale = append(stale, pending{dir, files})
		}
	}
	if len(stale) == 0 {
		w.refreshAt = time.Time{}
		return time.Time{}, nil
	}
	if w.refreshAt.IsZero() {
		w.refreshAt = now.Add(refreshDelay(w.k.refreshDelays.of(pod.Namespace, w.k.refreshDelay), w.uid))
		w.k.logf("%s: mounted files changed, refreshed at %s", w.key, w.refreshAt.Format(time.RFC3339Nano))
	}
	if now.Before(w.refreshAt) {
		return w.refreshAt, nil
	}
	for _, p := range stale {
		if _, err := writeFiles(p.dir, p.files); err != nil {
			return time.Time{}, err
		}
	}
	w.refreshAt = time.Time{}
	w.k.logf("%s: mounted files refreshed", w.key)
	return time.Time{}, nil
}

// volumeFiles is the content of a ConfigMap, Secret or projected volume,
// by relative path, and which files come from a ConfigMap; nil for volumes
// that are plain directories.
func (w *podWorker) volumeFiles(ns string, v corev1.Volume) (files map[string][]byte, fromConfigMap map[string]bool, err error) {
	switch {
	case v.ConfigMap != nil:
		files, err = w.configMapFiles(ns, v.ConfigMap.Name, v.ConfigMap.Optional, v.ConfigMap.Items)
		return files, allOf(files), err
	case v.Secret != nil:
		files, err = w.secretFiles(ns, v.Secret.SecretName, v.Secret.Optional, v.Secret.Items)
		return files, nil, err
	case v.Projected != nil:
		files, fromConfigMap = map[string][]byte{}, map[string]bool{}
		for _, src := range v.Projected.Sources {
			var part map[string][]byte
			switch {
			case src.ConfigMap != nil:
				part, err = w.configMapFiles(ns, src.ConfigMap.Name, src.ConfigMap.Optional, src.ConfigMap.Items)
				maps.Copy(fromConfigMap, allOf(part))
			case src.Secret != nil:
				part, err = w.secretFiles(ns, src.Secret.Name, src.Secret.Optional, src.Secret.Items)
			case src.ServiceAccountToken != nil, src.DownwardAPI != nil:
				// Istio's proxy token and pod info: the proxy is the
				// model's and reads neither.
				continue
			default:
				err = fmt.Errorf("only configMap and secret sources (and, for Istio's proxy, serviceAccountToken and downwardAPI) are supported here")
			}
			if err != nil {
				return nil, nil, err
			}
			maps.Copy(files, part)
		}
		return files, fromConfigMap, nil
	}
	return nil, nil, nil
}

func (w *podWorker) configMapFiles(ns, name string, optional *bool, items []corev1.KeyToPath) (map[string][]byte, error) {
	data := map[string][]byte{}
	cm, err := w.k.configMap(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return data, nil
		}
		return nil, err
	}
	for k, s := range cm.Data {
		data[k] = []byte(s)
	}
	for k, b := range cm.BinaryData {
		data[k] = b
	}
	return project(data, items)
}

func (w *podWorker) secretFiles(ns, name string, optional *bool, items []corev1.KeyToPath) (map[string][]byte, error) {
	s, err := w.k.secret(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return map[string][]byte{}, nil
		}
		return nil, err
	}
	return project(s.Data, items)
}

func allOf(files map[string][]byte) map[string]bool {
	out := make(map[string]bool, len(files))
	for rel := range files {
		out[rel] = true
	}
	return out
}

// filesDiffer reports whether dir holds other files than files.
func filesDiffer(dir string, files map[string][]byte) (bool, error) {
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(got, want) {
			return true, nil
		}
	}
	differs := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, ok := files[rel]; !ok {
			differs = true
		}
		return nil
	})
	return differs, err
}

// project picks the keys a volume lists, under their paths; every key when
// it lists none.
func project(data map[string][]byte, items []corev1.KeyToPath) (map[string][]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	out := map[string][]byte{}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("key %q not found", it.Key)
		}
		out[it.Path] = b
	}
	return out, nil
}

func mountsVolume(c *corev1.Container, volume string) bool {
	for _, vm := range c.VolumeMounts {
		if vm.Name == volume {
			return true
		}
	}
	return false
}

// writeFiles makes dir hold exactly files. Each file is replaced by a
// rename, so a process reading it on a reload sees the old or the new
// content, never half of one. wrote reports whether anything changed.
func writeFiles(dir string, files map[string][]byte) (wrote bool, err error) {
	paths := make([]string, 0, len(files))
	for rel := range files {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	for _, rel := range paths {
		path := filepath.Join(dir, rel)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return wrote, err
		}
		tmp := path + ".loopback-tmp"
		if err := os.WriteFile(tmp, files[rel], 0o644); err != nil {
			return wrote, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return wrote, err
		}
		wrote = true
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, ok := files[rel]; !ok {
			wrote = true
			return os.Remove(path)
		}
		return nil
	})
	return wrote, err
}
