package kubectlplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/render"
)

// WriteReport writes a support bundle of the NatsCluster ns/name to w, a
// gzipped tar: status.txt (WriteStatus), the NatsCluster, its
// StatefulSet, Services, ConfigMaps, budget and NetworkPolicies, its pods,
// the namespace's events, the JetStream resources that name it, and the
// names and keys of its Secrets.
//
// No secret goes in: Secrets are listed as metadata only (their data
// never leaves the API server), ConfigMaps only when the cluster owns
// them (the operator keeps no secret in one), and every object loses its
// managed fields and the last-applied annotation, which can quote what
// was applied.
func WriteReport(ctx context.Context, c client.Reader, scheme *runtime.Scheme, ns, name string, w io.Writer, now time.Time) error {
	cl, err := gather(ctx, c, ns, name)
	if err != nil {
		return err
	}
	b := newBundle(w, now)
	var status bytes.Buffer
	if err := WriteStatus(&status, cl, now); err != nil {
		return err
	}
	b.add("status.txt", status.Bytes())
	owned := func(o client.Object) bool { return metav1.IsControlledBy(o, &cl.NatsCluster) }
	sel := client.MatchingLabels{render.LabelInstance: name}
	in := client.InNamespace(ns)

	docs := []client.Object{&cl.NatsCluster}
	for i := range cl.Pods {
		docs = append(docs, &cl.Pods[i])
	}
	var sts appsv1.StatefulSetList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	var pdbs policyv1.PodDisruptionBudgetList
	var nps networkingv1.NetworkPolicyList
	for _, l := range []client.ObjectList{&sts, &svcs, &cms, &pdbs, &nps} {
		if err := c.List(ctx, l, in, sel); err != nil {
			return fmt.Errorf("listing for the report: %w", err)
		}
	}
	for i := range sts.Items {
		docs = append(docs, &sts.Items[i])
	}
	for i := range svcs.Items {
		docs = append(docs, &svcs.Items[i])
	}
	for i := range cms.Items {
		if owned(&cms.Items[i]) {
			docs = append(docs, &cms.Items[i])
		}
	}
	for i := range pdbs.Items {
		docs = append(docs, &pdbs.Items[i])
	}
	for i := range nps.Items {
		docs = append(docs, &nps.Items[i])
	}
	data, err := yamlDocs(scheme, docs)
	if err != nil {
		return err
	}
	b.add("objects.yaml", data)

	var events eventsv1.EventList
	if err := c.List(ctx, &events, in); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	b.add("events.txt", eventLines(events.Items))

	var js bytes.Buffer
	for _, r := range cl.JetStream {
		out, err := yaml.Marshal(map[string]any{"kind": r.Kind, "namespace": r.Namespace, "name": r.Name, "status": r.Status})
		if err != nil {
			return err
		}
		js.WriteString("---\n")
		js.Write(out)
	}
	b.add("jetstream.yaml", js.Bytes())

	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, secrets, in, sel); err != nil {
		return fmt.Errorf("secrets' names: %w", err)
	}
	b.add("secrets.txt", secretLines(secrets.Items))
	return b.close()
}

// yamlDocs prints objs as YAML documents, with their kind, without what
// can quote applied data.
func yamlDocs(scheme *runtime.Scheme, objs []client.Object) ([]byte, error) {
	var out bytes.Buffer
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a != nil {
			delete(a, corev1.LastAppliedConfigAnnotation)
			o.SetAnnotations(a)
		}
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}

// eventLines are the namespace's events, oldest first, one a line.
func eventLines(events []eventsv1.Event) []byte {
	sort.Slice(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	var out bytes.Buffer
	for i := range events {
		e := &events[i]
		fmt.Fprintf(&out, "%s %s %s %s/%s %s: %s\n", eventTime(e).UTC().Format(time.RFC3339), e.Type, e.Reason,
			e.Regarding.Kind, e.Regarding.Name, e.ReportingController, oneLine(e.Note))
	}
	return out.Bytes()
}

func eventTime(e *eventsv1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.DeprecatedLastTimestamp.Time
}

// secretLines name each Secret and who made it: what a reader of the
// report needs to see that one is there, nothing it holds.
func secretLines(secrets []metav1.PartialObjectMetadata) []byte {
	var out []string
	for _, s := range secrets {
		owner := "not the cluster's"
		for _, ref := range s.OwnerReferences {
			if ref.Controller != nil && *ref.Controller {
				owner = "made by " + ref.Kind + " " + ref.Name
			}
		}
		out = append(out, fmt.Sprintf("%s (%s, created %s)", s.Name, owner, s.CreationTimestamp.UTC().Format(time.RFC3339)))
	}
	sort.Strings(out)
	return []byte(strings.Join(out, "\n") + "\n")
}

// bundle is a gzipped tar written as files are added; the first error is
// kept and returned by close.
type bundle struct {
	gz  *gzip.Writer
	tw  *tar.Writer
	now time.Time
	err error
}

func newBundle(w io.Writer, now time.Time) *bundle {
	gz := gzip.NewWriter(w)
	return &bundle{gz: gz, tw: tar.NewWriter(gz), now: now}
}

func (b *bundle) add(name string, data []byte) {
	if b.err != nil {
		return
	}
	hdr := &tar.Header{Name: "kubenats-report/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: b.now}
	if b.err = b.tw.WriteHeader(hdr); b.err == nil {
		_, b.err = b.tw.Write(data)
	}
}

func (b *bundle) close() error {
	if b.err != nil {
		return b.err
	}
	if err := b.tw.Close(); err != nil {
		return err
	}
	return b.gz.Close()
}
