package bench

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// What the floor's servers get in place of what the loopback gives a pod:
// an address, the route and client certificates' files, and the container
// environment with generated values for the Secrets it names.

// writeFloorPKI makes a CA and a certificate for names as the operator
// makes them (internal/pki; NatsCluster.RouteDNSNames, ClientDNSNames)
// and writes them as a TLS Secret's files; it returns their directory.
func writeFloorPKI(b testing.TB, nc *v1alpha1.NatsCluster, what string, names []string) string {
	b.Helper()
	now := time.Now()
	ca, err := pki.NewCA(nc.Name+" "+what+" CA", now, pki.CAValidity)
	if err != nil {
		b.Fatal(err)
	}
	cert, err := pki.Issue(ca, names, now, pki.CertValidity)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for name, content := range map[string]string{render.TLSCertKey: cert.Cert, render.TLSKeyKey: cert.Key, render.TLSCAKey: ca.Cert} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// containerEnvFor resolves the container's environment for the pod as the
// kubelet does (HOSTNAME, then env in order, $(VAR) expanded against the
// variables before it), the Secrets' values taken from secrets.
func containerEnvFor(b testing.TB, ctr *corev1.Container, pod string, secrets map[string]string) []string {
	b.Helper()
	if len(ctr.EnvFrom) > 0 {
		b.Fatalf("the container has envFrom %+v, which the floor does not resolve", ctr.EnvFrom)
	}
	names, values := []string{"HOSTNAME"}, map[string]string{"HOSTNAME": pod}
	for _, e := range ctr.Env {
		var v string
		switch src := e.ValueFrom; {
		case src == nil:
			v = e.Value
			for name, value := range values {
				v = strings.ReplaceAll(v, "$("+name+")", value)
			}
		case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.name":
			v = pod
		case src.FieldRef != nil && strings.HasPrefix(src.FieldRef.FieldPath, "metadata.labels["):
			// The zone and region labels: the loopback node has none.
			v = ""
		case src.SecretKeyRef != nil:
			var ok bool
			if v, ok = secrets[src.SecretKeyRef.Name+"/"+src.SecretKeyRef.Key]; !ok {
				b.Fatalf("env %s: the floor has no value for Secret %s key %s", e.Name, src.SecretKeyRef.Name, src.SecretKeyRef.Key)
			}
		default:
			b.Fatalf("env %s: a source the floor does not resolve: %+v", e.Name, src)
		}
		if _, ok := values[e.Name]; !ok {
			names = append(names, e.Name)
		}
		values[e.Name] = v
	}
	// The client and system passwords are in users.conf (prepare writes it).
	for _, want := range []string{render.EnvServerName, render.EnvRoutePassword, render.EnvRouteURLs, render.EnvRouteAdvertise} {
		if values[want] == "" {
			b.Fatalf("the container's environment has no %s: %v", want, names)
		}
	}
	env := make([]string, len(names))
	for i, n := range names {
		env[i] = n + "=" + values[n]
	}
	return env
}

// newFloorPassword is a random password that nats-server reads back as
// the same string from an environment variable (a letter first: an
// all-hex value may lex as a number).
func newFloorPassword(b testing.TB) string {
	b.Helper()
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		b.Fatal(err)
	}
	p := "p" + hex.EncodeToString(raw)
	if err := natsconf.CheckEnvString(p); err != nil {
		b.Fatal(err)
	}
	return p
}

// lockAddressSlot takes a 127.0.<slot>.0/24 for the floor's servers with
// the lock-file convention of the loopback harness (test/loopback,
// addresses.go), from the top down, so that it never shares addresses with
// a loopback cluster running at the same time. The lock goes with the
// benchmark.
func lockAddressSlot(b testing.TB) int {
	b.Helper()
	for slot := 254; slot >= 1; slot-- {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("kubenats-loopback-127.0.%d.lock", slot))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			b.Cleanup(func() { _ = f.Close() })
			return slot
		}
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			b.Fatalf("locking %s: %v", path, err)
		}
	}
	b.Fatal("every 127.0.x.0/24 slot is taken")
	return 0
}
