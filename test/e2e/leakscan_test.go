package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestLeakScannerFindsAPlantedLeak: the scan is no test that cannot fail:
// a password written into a ConfigMap, one in a StatefulSet's pod
// template (an env value, where a careless operator would put it instead
// of a reference) and one in an annotation are found as the suite sees
// them, and one in a server's log as the final report reads the logs;
// and in the places a careless operator would record a seed it made for
// an account or a user: a NatsAccount's status and labels, a NatsUser's
// annotations. Careless variant run: the scanner watching only the kinds
// it had first (NatsCluster and the JetStream kinds), as it did: "the
// planted leak ... NatsAccount ... status is not found yet".
func TestLeakScannerFindsAPlantedLeak(t *testing.T) {
	ns := namespace(t)
	stamp := time.Now().UnixNano()
	values := map[string]string{}
	for _, k := range []string{"config", "env", "annotation", "log", "accountStatus", "accountLabel", "userAnnotation"} {
		values[k] = fmt.Sprintf("e2ekit.Canary%sPassword%d", k, stamp)
	}
	if err := cluster.Client.Create(testCtx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e2ekit.Canary},
		StringData: values}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Create(testCtx(t), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e2ekit.Canary, Annotations: map[string]string{"careless/password": values["annotation"]}},
		Data:       map[string]string{"careless.conf": "password: " + values["config"]}}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": e2ekit.Canary}
	if err := cluster.Client.Create(testCtx(t), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e2ekit.Canary},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: "app", Env: []corev1.EnvVar{{Name: "PASSWORD", Value: values["env"]}},
			}}}},
		}}); err != nil {
		t.Fatal(err)
	}
	// A NatsAccount of a cluster that is not there (the operator leaves
	// it alone but for its Ready condition), a seed in its status and
	// label, and one in the annotation of its user.
	account := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e2ekit.Canary,
		Labels: map[string]string{"careless-seed": values["accountLabel"]}},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "absent"}}}
	if err := cluster.Client.Create(testCtx(t), account); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(account), account); err != nil {
			return err
		}
		account.Status.PublicKey = values["accountStatus"]
		return cluster.Client.Status().Update(testCtx(t), account)
	})
	if err := cluster.Client.Create(testCtx(t), &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e2ekit.Canary,
		Annotations: map[string]string{"careless/seed": values["userAnnotation"]}},
		Spec: v1alpha1.NatsUserSpec{Account: e2ekit.Canary}}); err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	for name, text := range map[string]string{
		"operator.log":                          "nothing here",
		ns + "_" + e2ekit.Canary + "-0_uid.log": "[INF] careless: " + values["log"],
	} {
		if err := os.WriteFile(filepath.Join(logDir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := e2ekit.ScannedLogs(logDir)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		found := e2ekit.Leaks.Find(logs, true)
		for _, where := range []string{
			"key config appears in ConfigMap " + ns + "/" + e2ekit.Canary,
			"key annotation appears in ConfigMap " + ns + "/" + e2ekit.Canary + " labels and annotations",
			"key env appears in StatefulSet " + ns + "/" + e2ekit.Canary + " spec",
			"key log appears in the log " + ns + "_" + e2ekit.Canary + "-0_uid.log",
			"key accountStatus appears in NatsAccount " + ns + "/" + e2ekit.Canary + " status",
			"key accountLabel appears in NatsAccount " + ns + "/" + e2ekit.Canary + " labels and annotations",
			"key userAnnotation appears in NatsUser " + ns + "/" + e2ekit.Canary + " labels and annotations",
		} {
			if !strings.Contains(found, where) {
				return fmt.Errorf("the planted leak %q is not found yet (found %q)", where, found)
			}
		}
		return nil
	})
	if _, err := e2ekit.ScannedLogs(t.TempDir()); err == nil {
		t.Error("a log directory without the operator's log was scanned as if complete")
	}
}
