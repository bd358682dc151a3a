package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

const usage = `kubectl kubenats: what kubenats runs, and the changes it carries out.

Usage:
  kubectl kubenats status NATSCLUSTER             conditions, servers, certificates, JetStream resources
  kubectl kubenats report NATSCLUSTER [-o FILE]   a support bundle (gzipped tar), no secret in it
  kubectl kubenats pause KIND NAME                the operator makes no change to it until resumed
  kubectl kubenats resume KIND NAME               the operator carries out every change made meanwhile
  kubectl kubenats balance NATSCLUSTER            ask the operator to spread the stream and consumer leaders now
  kubectl kubenats stepdown NATSCLUSTER [SERVER]  ask the JetStream meta leader to hand over (to SERVER preferably)
  kubectl kubenats evacuate NATSCLUSTER SERVER    move every stream and consumer replica off SERVER
  kubectl kubenats promote STREAM                 make a mirror Stream a stream of its own (removes spec.mirror)
      [--subjects a.>,b.>]                        the subjects it takes writes on from then
  kubectl kubenats completion bash                a bash completion script
  kubectl kubenats version

KIND is natscluster, stream, consumer, keyvalue or objectstore.

Flags:
  -n, --namespace NS    the namespace (default: the kubeconfig context's)
      --kubeconfig F    the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)
      --context C       the kubeconfig context
`

// Connect makes the client the verbs use and says the namespace to use
// when none is given.
type Connect func(kubeconfig, context string) (client.Client, string, error)

// Scheme is what the plugin reads and writes: Kubernetes' kinds and
// kubenats'.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}

// Run runs one command line of the plugin and returns its exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, connect Connect, version string) int {
	fs := pflag.NewFlagSet("kubectl-kubenats", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ns := fs.StringP("namespace", "n", "", "")
	kubeconfig := fs.String("kubeconfig", "", "")
	kubeContext := fs.String("context", "", "")
	out := fs.StringP("output", "o", "", "")
	subjects := fs.StringSlice("subjects", nil, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "kubectl kubenats: %v\n\n%s", err, usage)
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	verb, rest := rest[0], rest[1:]
	switch verb {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "completion":
		if len(rest) != 1 || rest[0] != "bash" {
			fmt.Fprintln(stderr, "kubectl kubenats completion: bash is the one shell supported")
			return 2
		}
		fmt.Fprint(stdout, bashCompletion)
		return 0
	}
	// The fewest and most arguments of each verb (-1: any).
	want := map[string][2]int{"status": {1, 1}, "report": {1, 1}, "pause": {2, 2}, "resume": {2, 2}, "balance": {1, 1},
		"stepdown": {1, 2}, "evacuate": {2, 2}, "promote": {1, 1}, completeVerb: {0, -1}}
	n, known := want[verb]
	if !known {
		fmt.Fprintf(stderr, "kubectl kubenats: unknown command %q\n\n%s", verb, usage)
		return 2
	}
	if len(rest) < n[0] || n[1] >= 0 && len(rest) > n[1] {
		fmt.Fprintf(stderr, "kubectl kubenats %s takes %s argument(s)\n\n%s", verb, argCount(n), usage)
		return 2
	}
	c, defaultNS, err := connect(*kubeconfig, *kubeContext)
	if err != nil {
		fmt.Fprintf(stderr, "kubectl kubenats: %v\n", err)
		return 1
	}
	if *ns == "" {
		*ns = defaultNS
	}
	if err := runVerb(ctx, c, verb, rest, *ns, verbFlags{out: *out, subjects: *subjects}, stdout); err != nil {
		fmt.Fprintf(stderr, "kubectl kubenats %s: %v\n", verb, err)
		return 1
	}
	return 0
}

// verbFlags are the flags some verbs take.
type verbFlags struct {
	out      string
	subjects []string
}

func argCount(n [2]int) string {
	if n[0] == n[1] {
		return fmt.Sprint(n[0])
	}
	return fmt.Sprintf("%d to %d", n[0], n[1])
}

func runVerb(ctx context.Context, c client.Client, verb string, args []string, ns string, flags verbFlags, stdout io.Writer) error {
	out := flags.out
	switch verb {
	case "status":
		cl, err := gather(ctx, c, ns, args[0])
		if err != nil {
			return err
		}
		return WriteStatus(stdout, cl, time.Now())
	case "report":
		w := stdout
		if out != "" {
			f, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		return WriteReport(ctx, c, c.Scheme(), ns, args[0], w, time.Now())
	case "pause", "resume":
		if err := SetPaused(ctx, c, args[0], ns, args[1], verb == "pause"); err != nil {
			return err
		}
		what := "paused: the operator makes no change to it"
		if verb == "resume" {
			what = "resumed: the operator carries out what changed meanwhile"
		}
		_, err := fmt.Fprintf(stdout, "%s %s/%s %s\n", strings.ToLower(args[0]), ns, args[1], what)
		return err
	case "balance":
		if err := RequestBalance(ctx, c, ns, args[0], time.Now()); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "natscluster %s/%s: a balance of its leaders is asked for; kubectl kubenats status %s shows the count\n", ns, args[0], args[0])
		return err
	case "stepdown":
		server := ""
		if len(args) == 2 {
			server = args[1]
		}
		if err := RequestStepDown(ctx, c, ns, args[0], server, time.Now()); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "natscluster %s/%s: a step-down of the JetStream meta leader is asked for; kubectl kubenats status %s shows the leader\n", ns, args[0], args[0])
		return err
	case "evacuate":
		if err := RequestEvacuation(ctx, c, ns, args[0], args[1], time.Now()); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "natscluster %s/%s: an evacuation of %s is asked for; its events say when the replicas moved\n", ns, args[0], args[1])
		return err
	case "promote":
		if err := Promote(ctx, c, ns, args[0], flags.subjects); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "stream %s/%s: promoted, it no longer follows its origin; point its writers at it\n", ns, args[0])
		return err
	case completeVerb:
		return complete(ctx, c, ns, args, stdout)
	}
	return fmt.Errorf("unknown command")
}
