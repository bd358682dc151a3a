package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
)

// files is a repeatable -f flag.
type files []string

func (f *files) String() string     { return fmt.Sprint(*f) }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func runRender(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var in files
	fs.Var(&in, "f", `file with NatsCluster documents ("-" for standard input); repeatable`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(in) == 0 {
		fmt.Fprintln(stderr, "kubenats render: name at least one file with -f")
		return 2
	}
	var out bytes.Buffer
	for _, name := range in {
		if err := renderFile(name, &out); err != nil {
			fmt.Fprintf(stderr, "kubenats render: %s: %v\n", name, err)
			return 1
		}
	}
	_, _ = stdout.Write(out.Bytes())
	return 0
}

func renderFile(name string, out io.Writer) error {
	data, err := readInput(name)
	if err != nil {
		return err
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		if err := renderDocument(doc, out); err != nil {
			return err
		}
	}
	return nil
}

func renderDocument(doc []byte, out io.Writer) error {
	var fields map[string]any
	if err := yaml.Unmarshal(doc, &fields); err != nil {
		return err
	}
	if len(fields) == 0 {
		return nil // only comments or separators, as kubectl accepts them
	}
	var c v1alpha1.NatsCluster
	if err := yaml.UnmarshalStrict(doc, &c); err != nil {
		return err
	}
	if c.Kind != "NatsCluster" || c.APIVersion != v1alpha1.GroupVersion.String() {
		return fmt.Errorf("expected kind NatsCluster of %s, got %q of %q", v1alpha1.GroupVersion, c.Kind, c.APIVersion)
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	objs, err := render.Objects(&c, render.Inputs{})
	if err != nil {
		return fmt.Errorf("NatsCluster %s: %w", c.Name, err)
	}
	fmt.Fprintf(out, "# NatsCluster %s/%s. Secrets these objects expect, which kubenats render\n", c.Namespace, c.Name)
	fmt.Fprintf(out, "# does not print because their values are yours to make:\n")
	for _, s := range expectedSecrets(c.WithDefaults()) {
		fmt.Fprintf(out, "#   %s\n", s)
	}
	list := make([]runtime.Object, len(objs))
	for i, o := range objs {
		list[i] = o
	}
	return manifest.WriteYAML(out, list...)
}

// expectedSecrets describes the Secrets the StatefulSet reads.
func expectedSecrets(c *v1alpha1.NatsCluster) []string {
	var out []string
	if ref, ok := c.ClientSecretRef(); ok && c.Spec.Auth.Mode == v1alpha1.AuthToken {
		out = append(out, fmt.Sprintf("Secret %s, key %s: the client token", ref.Name, ref.Key))
	}
	if c.HasUsersFile() {
		out = append(out, fmt.Sprintf("Secret %s, key %s: nats.conf variables %s (the client password), %s (the system account user's password) and %s (any string that changes with them)",
			c.UsersSecretName(), render.UsersConfKey, render.EnvPassword, render.EnvSystemPassword, render.EnvUsersRevision))
	}
	if c.HasRoutes() {
		out = append(out, fmt.Sprintf("Secret %s, keys %s and %s: the route password, and the route URLs made with it (%s)",
			c.RouteSecretName(), render.PasswordKey, render.RouteURLsKey, "one nats://kubenats-route:<password>@<pod>.<headless>:6222 per server, as a nats.conf array"))
		names := strings.Join(c.RouteDNSNames(render.DefaultClusterDomain), ", ")
		if c.Spec.RouteTLSEnabled() {
			out = append(out, fmt.Sprintf("Secret %s, keys tls.crt, tls.key, ca.crt: the route certificate, for %s",
				c.RouteTLSSecretName(), names))
		}
	}
	what := "the client certificate"
	if c.Spec.GeneratesClientPKI() {
		// The operator signs it with a CA of the cluster's own; without
		// the operator, whoever applies these objects does.
		what += ", for " + strings.Join(c.ClientDNSNames(render.DefaultClusterDomain), ", ") + "; ca.crt is the CA clients trust"
	}
	out = append(out, certificateSecret(c.ClientTLSSecretName(), what, c.ClientCertificateName(), c.Spec.ClientTLS().IssuerRef != nil))
	out = append(out, topologySecrets(c)...)
	if len(out) == 0 {
		out = append(out, "(none)")
	}
	return out
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}
