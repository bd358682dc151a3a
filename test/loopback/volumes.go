package loopback

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

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
		case v.ConfigMap != nil, v.Secret != nil, v.EmptyDir != nil:
			dirs[v.Name] = filepath.Join(w.dir, "volumes", v.Name)
		case v.DownwardAPI != nil, v.Projected != nil:
			// Only Istio's proxy mounts these here (its pod info and its
			// token): plain directories, since the proxy is the model's.
			dirs[v.Name] = filepath.Join(w.dir, "volumes", v.Name)
		default:
			return nil, fmt.Errorf("volume %s: only configMap, secret, emptyDir, persistentVolumeClaim (and, for the proxy, downwardAPI and projected) volumes are supported here", v.Name)
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

// syncVolumes brings every volume directory up to date and reports whether
// the files of a volume that the given container mounts changed. rewrite
// turns a file's content into what that container should read.
func (w *podWorker) syncVolumes(pod *corev1.Pod, dirs map[string]string, c *corev1.Container, rewrite func(path string, data []byte) []byte) (changed bool, err error) {
	for _, v := range pod.Spec.Volumes {
		dir := dirs[v.Name]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		files, err := w.volumeFiles(pod.Namespace, v)
		if err != nil {
			return false, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if files == nil {
			continue // a directory whose content is the process's own
		}
		mounted := mountsVolume(c, v.Name)
		if mounted && v.ConfigMap != nil {
			for rel, data := range files {
				files[rel] = rewrite(filepath.Join(dir, rel), data)
			}
		}
		wrote, err := writeFiles(dir, files)
		if err != nil {
			return false, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		changed = changed || (wrote && mounted)
	}
	return changed, nil
}

// volumeFiles is the content of a ConfigMap or Secret volume, by relative
// path; nil for volumes that are plain directories.
func (w *podWorker) volumeFiles(ns string, v corev1.Volume) (map[string][]byte, error) {
	switch {
	case v.ConfigMap != nil:
		data := map[string][]byte{}
		cm, err := w.k.configMap(ns, v.ConfigMap.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && v.ConfigMap.Optional != nil && *v.ConfigMap.Optional {
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
		return project(data, v.ConfigMap.Items)
	case v.Secret != nil:
		s, err := w.k.secret(ns, v.Secret.SecretName)
		if err != nil {
			if apierrors.IsNotFound(err) && v.Secret.Optional != nil && *v.Secret.Optional {
				return map[string][]byte{}, nil
			}
			return nil, err
		}
		return project(s.Data, v.Secret.Items)
	}
	return nil, nil
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
