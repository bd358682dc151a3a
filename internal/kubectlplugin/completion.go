package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// completeVerb answers shell completion as cobra-based plugins do, the
// protocol kubectl's own plugin completion speaks (kubectl asks an
// executable kubectl_complete-kubenats): one candidate a line, then
// ":4" (no file names).
const completeVerb = "__complete"

// verbs are what the first word completes to.
var verbs = []string{"status", "report", "pause", "resume", "balance", "stepdown", "evacuate", "promote", "completion", "version"}

// complete prints the candidates for the last word of args.
func complete(ctx context.Context, c client.Client, ns string, args []string, w io.Writer) error {
	var candidates []string
	switch {
	case len(args) <= 1:
		candidates = verbs
	case slices.Contains([]string{"status", "report", "balance", "stepdown", "evacuate"}, args[0]) && len(args) == 2:
		candidates = names(ctx, c, "natscluster", ns)
	case args[0] == "promote" && len(args) == 2:
		candidates = names(ctx, c, "stream", ns)
	case (args[0] == "pause" || args[0] == "resume") && len(args) == 2:
		candidates = KindNames
	case (args[0] == "pause" || args[0] == "resume") && len(args) == 3:
		candidates = names(ctx, c, args[1], ns)
	}
	prefix := ""
	if len(args) > 0 {
		prefix = args[len(args)-1]
	}
	for _, cand := range candidates {
		if strings.HasPrefix(cand, prefix) {
			fmt.Fprintln(w, cand)
		}
	}
	_, err := fmt.Fprintln(w, ":4")
	return err
}

// names lists the resources of kind in ns; none when they cannot be read.
func names(ctx context.Context, c client.Client, kind, ns string) []string {
	obj, err := objectOf(kind)
	if err != nil {
		return nil
	}
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil
	}
	var out []string
	ul := &metav1.PartialObjectMetadataList{}
	ul.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, ul, client.InNamespace(ns)); err != nil {
		return nil
	}
	for _, item := range ul.Items {
		out = append(out, item.Name)
	}
	return out
}

// bashCompletion completes `kubectl-kubenats` and, through kubectl's
// plugin completion, `kubectl kubenats`.
const bashCompletion = `# kubectl kubenats completion for bash: source it, or put it in
# /etc/bash_completion.d. For "kubectl kubenats" (kubectl 1.26+), put an
# executable kubectl_complete-kubenats on PATH that runs:
#   exec kubectl-kubenats __complete "$@"
_kubectl_kubenats() {
  local words=("${COMP_WORDS[@]:1:COMP_CWORD}")
  local IFS=$'\n'
  COMPREPLY=($(kubectl-kubenats __complete "${words[@]}" 2>/dev/null | grep -v '^:'))
}
complete -F _kubectl_kubenats kubectl-kubenats
`
