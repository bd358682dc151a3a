package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/convert"
	"github.com/kubenats/kubenats/internal/manifest"
)

func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		in      files
		opts    convert.Options
		servers string
	)
	fs.Var(&in, "f", `file with NACK documents, or the official NATS chart's (helm get manifest) ("-" for standard input, the default); repeatable`)
	cluster := fs.String("cluster", "", "NatsCluster (name or namespace/name) for resources naming neither servers nor an account: NACK's --servers")
	fs.StringVar(&servers, "server", "", "comma-separated NATS URLs for those resources, instead of -cluster")
	fs.StringVar(&opts.Namespace, "namespace", "", "namespace of resources that name none")
	allowLoss := fs.Bool("allow-not-carried", false, "exit 0 even when settings were not carried (they are still listed)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cluster != "" && servers != "" {
		fmt.Fprintln(stderr, "kubenats convert: give -cluster or -server, not both")
		return 2
	}
	if *cluster != "" {
		ref := v1alpha1.ClusterRef{Name: *cluster}
		if ns, name, ok := strings.Cut(*cluster, "/"); ok {
			ref = v1alpha1.ClusterRef{Namespace: ns, Name: name}
		}
		opts.Cluster = &ref
	}
	if servers != "" {
		opts.Servers = strings.Split(servers, ",")
	}
	if len(in) == 0 {
		in = files{"-"}
	}
	var docs [][]byte
	for _, name := range in {
		data, err := readInput(name)
		if err != nil {
			fmt.Fprintf(stderr, "kubenats convert: %v\n", err)
			return 1
		}
		d, err := manifest.Documents(data)
		if err != nil {
			fmt.Fprintf(stderr, "kubenats convert: %s: %v\n", name, err)
			return 1
		}
		docs = append(docs, d...)
	}
	res, err := convertAll(docs, opts)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats convert: %v\n", err)
		return 1
	}
	objs := make([]runtime.Object, len(res.Objects))
	for i, o := range res.Objects {
		objs[i] = o
	}
	var out bytes.Buffer
	if err := manifest.WriteYAML(&out, objs...); err != nil {
		fmt.Fprintf(stderr, "kubenats convert: %v\n", err)
		return 1
	}
	_, _ = stdout.Write(out.Bytes())
	for _, s := range res.Secrets {
		ns, name, _ := strings.Cut(s, "/")
		fmt.Fprintf(stderr, "kubenats convert: the resources read Secret %s: label it for kubenats: kubectl label secret -n %s %s %s=true\n", s, ns, name, v1alpha1.SecretAllowLabel)
	}
	for _, l := range res.Lost {
		fmt.Fprintf(stderr, "kubenats convert: %s\n", l)
	}
	if len(res.Lost) > 0 && !*allowLoss {
		fmt.Fprintf(stderr, "kubenats convert: %d settings not carried (-allow-not-carried to accept)\n", len(res.Lost))
		return 1
	}
	return 0
}

// convertAll converts the official chart's objects among docs into
// NatsClusters and the rest, NACK's resources, into kubenats' own.
func convertAll(docs [][]byte, opts convert.Options) (convert.Result, error) {
	var chart, nack [][]byte
	for _, d := range docs {
		if convert.IsChartDocument(d) {
			chart = append(chart, d)
		} else {
			nack = append(nack, d)
		}
	}
	var res convert.Result
	if len(chart) > 0 {
		r, err := convert.Chart(chart, opts.Namespace)
		if err != nil {
			return res, err
		}
		res = r
	}
	if len(nack) > 0 || len(chart) == 0 {
		r, err := convert.Convert(nack, opts)
		if err != nil {
			return res, err
		}
		res.Objects, res.Lost, res.Secrets = append(res.Objects, r.Objects...), append(res.Lost, r.Lost...), append(res.Secrets, r.Secrets...)
	}
	return res, nil
}
