package envtest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// seedText matches an nkey seed of an operator, account or user: a whole
// token of 58 characters. A public key (56, from the same alphabet) holds
// "SO", "SA" or "SU" near its start about once in 110 (measured over
// 20,000 account keys): a pattern of "50 or more" after it matched the
// public keys nats.conf lists, and failed this test in CI once.
var seedText = regexp.MustCompile(`\bS[OAU][A-Z2-7]{56}\b`)

// TestJWTModeKeepsItsKeysInTheTrustSecret: a cluster in mode jwt gets its
// NATS operator in <name>-operator, made once; nats.conf trusts it and
// carries no seed; no pod mounts the Secret; no password Secret of mode
// users is made. Careless variants: keys made anew at every pass (the
// seed changes after an edit of the cluster and every account is locked
// out), a seed in the ConfigMap, status or an event.
func TestJWTModeKeepsItsKeysInTheTrustSecret(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Auth.Mode = v1alpha1.AuthJWT
	})
	create(t, c)
	trust := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.TrustSecretName()}}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(trust), trust); err != nil {
			status, reason, message := readyMessage(t, c)
			return fmt.Errorf("%v (Ready %s %s: %s)", err, status, reason, message)
		}
		return nil
	})
	seed := string(trust.Data[render.TrustOperatorSeedKey])
	if !strings.HasPrefix(seed, "SO") {
		t.Fatalf("the operator seed is not an operator seed")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.ConfigMapName()}}
	eventually(t, wait, func() error { return k8s.Get(ctx(t), client.ObjectKeyFromObject(cm), cm) })
	text := cm.Data[render.ConfigKey]
	if !strings.Contains(text, string(trust.Data[render.TrustOperatorJWTKey])) || !strings.Contains(text, "type: full") {
		t.Fatalf("nats.conf does not trust the cluster's operator:\n%s", text)
	}
	for _, name := range []string{c.SystemSecretName(), c.UsersSecretName(), c.AuthSecretName()} {
		if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %s of mode users exists in mode jwt (%v)", name, err)
		}
	}
	var sts appsv1.StatefulSet
	eventually(t, wait, func() error { return k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: c.Name}, &sts) })
	if b, _ := json.Marshal(sts.Spec.Template); strings.Contains(string(b), trust.Name) {
		t.Fatal("the pods refer to the trust Secret")
	}

	// An edit makes another pass: the keys stay.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.PodTemplate.Labels = map[string]string{"pass": "two"} })
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(&sts), &sts); err != nil {
			return err
		}
		if sts.Spec.Template.Labels["pass"] != "two" {
			return errors.New("the edit has not reached the StatefulSet")
		}
		return nil
	})
	get(t, trust)
	if string(trust.Data[render.TrustOperatorSeedKey]) != seed {
		t.Fatal("the operator's key changed on another pass")
	}

	// Deleted under the servers, the keys are not made anew: every
	// account JWT on the servers is signed by the old operator key.
	// Careless variant: the trust Secret counted as unused because no pod
	// mounts it, and silently regenerated.
	if err := k8s.Delete(ctx(t), trust); err != nil {
		t.Fatal(err)
	}
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonGeneratedSecretMissing)
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(trust), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the trust Secret was made anew under running servers (%v)", err)
	}

	get(t, c)
	var cms corev1.ConfigMapList
	var events eventsv1.EventList
	if err := k8s.List(ctx(t), &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(ctx(t), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for where, what := range map[string]any{"a ConfigMap": cms.Items, "the status": c.Status, "an event": events.Items,
		"an annotation": []map[string]string{c.Annotations, sts.Annotations, sts.Spec.Template.Annotations, cm.Annotations}} {
		b, _ := json.Marshal(what)
		if seedText.Match(b) {
			t.Errorf("a seed appears in %s", where)
		}
	}
}
