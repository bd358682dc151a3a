package envtest_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// TestClientTLSByDefaultFromTheOperatorsCA: a NatsCluster that says
// nothing of client TLS gets a client CA of its own (a Secret no pod
// mounts), a certificate it signed for the client Service's and every
// server's names, mounted into the pods, and hands the CA and tls:// URLs
// to clients. Careless variants this fails: the route CA reused for
// clients (the CA Secrets would be one), the CA's key mounted into the
// pods, the certificate not verifiable under a server's DNS name.
func TestClientTLSByDefaultFromTheOperatorsCA(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-client-ca"}}
	certSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-client-tls"}}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-client"}}
	eventually(t, wait, func() error {
		for _, s := range []*corev1.Secret{caSecret, certSecret, creds} {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(s), s); err != nil {
				return err
			}
		}
		if len(creds.Data[render.TLSCAKey]) == 0 {
			return fmt.Errorf("the credentials Secret has no ca.crt yet")
		}
		return nil
	})
	ca := string(caSecret.Data[render.TLSCertKey])
	if ca == "" || len(caSecret.Data[render.TLSKeyKey]) == 0 {
		t.Fatal("nats-client-ca lacks the CA or its key")
	}
	if got := string(certSecret.Data[render.TLSCAKey]); got != ca {
		t.Error("nats-client-tls's ca.crt is not the client CA")
	}
	if got := string(creds.Data[render.TLSCAKey]); got != ca {
		t.Error("the credentials Secret's ca.crt is not the client CA")
	}
	routeCA := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-ca"}}
	eventually(t, wait, func() error { return k8s.Get(ctx(t), client.ObjectKeyFromObject(routeCA), routeCA) })
	if string(routeCA.Data[render.TLSCertKey]) == ca {
		t.Error("clients are handed the route CA")
	}
	for _, key := range []string{render.CredentialsURLKey, render.CredentialsServersKey} {
		if v := string(creds.Data[key]); !strings.HasPrefix(v, "tls://") {
			t.Errorf("credentials %s does not start with tls://", key)
		}
	}

	block, _ := pem.Decode(certSecret.Data[render.TLSCertKey])
	if block == nil {
		t.Fatal("nats-client-tls holds no certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(ca))
	for _, name := range []string{"nats." + ns + ".svc", c.PodDNSName("nats-2")} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the client certificate does not verify as %s: %v", name, err)
		}
	}

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)
	var mounted []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			mounted = append(mounted, v.Secret.SecretName)
		}
	}
	if !slices.Contains(mounted, "nats-client-tls") || slices.Contains(mounted, "nats-client-ca") {
		t.Errorf("the pods mount %v: want nats-client-tls, never nats-client-ca", mounted)
	}
	if got := sts.Spec.Template.Annotations[render.AnnotationClientTLS]; got != plan.ClientTLSRequired {
		t.Errorf("a new cluster's servers are marked %q, want %s", got, plan.ClientTLSRequired)
	}
}

// TestAClusterOfAnEarlierReleaseKeepsItsPlaintextClients: servers an
// earlier release ran without client TLS (a template with neither the
// client-tls mark nor a client certificate, made here by taking them off)
// keep accepting plaintext when the spec does not say, now beside TLS;
// false requires TLS, and unsetting it afterwards keeps TLS required.
// Careless variant this fails: an unset allowPlaintext read as false for
// every cluster, which cuts off every client of an upgraded one.
func TestAClusterOfAnEarlierReleaseKeepsItsPlaintextClients(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	eventually(t, wait, func() error { return k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts) })
	// What an earlier release wrote: no mark, no client certificate. A
	// pass already under way may write the template back over it; then
	// it is taken off again, until a pass has read it.
	earlier := func(s *appsv1.StatefulSet) {
		pod := &s.Spec.Template
		delete(pod.Annotations, render.AnnotationClientTLS)
		pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == render.ClientTLSVolume })
		for i := range pod.Spec.Containers {
			ctr := &pod.Spec.Containers[i]
			ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == render.ClientTLSVolume })
		}
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		switch sts.Spec.Template.Annotations[render.AnnotationClientTLS] {
		case plan.ClientTLSPlaintextAccepted:
			return nil
		case plan.ClientTLSRequired:
			earlier(sts)
			if err := k8s.Update(ctx(t), sts); err != nil {
				return err
			}
		}
		return fmt.Errorf("servers marked %q, want %s", sts.Spec.Template.Annotations[render.AnnotationClientTLS], plan.ClientTLSPlaintextAccepted)
	})
	servers := func(mark string, allowNonTLS bool) {
		t.Helper()
		eventually(t, wait, func() error {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
				return err
			}
			if got := sts.Spec.Template.Annotations[render.AnnotationClientTLS]; got != mark {
				return fmt.Errorf("servers marked %q, want %s", got, mark)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.ConfigMapName()}}
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(cm), cm); err != nil {
				return err
			}
			conf := cm.Data[render.ConfigKey]
			if !strings.Contains(conf, render.ClientTLSDir) {
				return fmt.Errorf("nats.conf serves no client TLS")
			}
			if got := strings.Contains(conf, "allow_non_tls: true"); got != allowNonTLS {
				return fmt.Errorf("nats.conf allow_non_tls %v, want %v", got, allowNonTLS)
			}
			return nil
		})
	}
	servers(plan.ClientTLSPlaintextAccepted, true)
	// Held over a window: the choice is kept, not made once and lost at
	// the next pass (which reads the template it wrote itself).
	poll.Holds(t, 3*time.Second, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		if got := sts.Spec.Template.Annotations[render.AnnotationClientTLS]; got != plan.ClientTLSPlaintextAccepted {
			return fmt.Errorf("servers marked %q after accepting plaintext", got)
		}
		return nil
	})
	update(t, c, func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{AllowPlaintext: ptr.To(false)}
	})
	servers(plan.ClientTLSRequired, false)
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Client = nil })
	servers(plan.ClientTLSRequired, false)
}
