package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The kernel settings the node's components change on their own: the
// kubelet (vm.overcommit_memory, vm.panic_on_oom, kernel.panic,
// kernel.panic_on_oops, kernel.keys.*), kube-proxy (route_localnet,
// bridge-nf-call-*) and the CNI bridge plugin (ip_forward). The node
// writes their values to its directory before it starts anything, and
// sweep writes them back, after a killed run too.
var sysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward",
	"net/ipv4/conf/all/forwarding",
	"net/ipv6/conf/all/forwarding",
	"net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables",
	"net/bridge/bridge-nf-call-ip6tables",
	"net/netfilter/nf_conntrack_max",
}

const sysctlFile = "sysctls.saved"

// saveSysctls records the settings in dir, as "name value" lines.
func saveSysctls(dir string) error {
	var b strings.Builder
	for _, s := range sysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err != nil {
			continue // not on this kernel
		}
		fmt.Fprintf(&b, "%s %s\n", s, strings.TrimSpace(string(v)))
	}
	return os.WriteFile(filepath.Join(dir, sysctlFile), []byte(b.String()), 0o644)
}

// restoreSysctls writes back what saveSysctls recorded in dir, if it did.
func restoreSysctls(dir string, report func(string, ...any)) error {
	data, err := os.ReadFile(filepath.Join(dir, sysctlFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var changed []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, want, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		path := filepath.Join("/proc/sys", name)
		now, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(now)) == want {
			continue
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return fmt.Errorf("restoring %s to %s: %w", name, want, err)
		}
		changed = append(changed, fmt.Sprintf("%s %s->%s", name, strings.TrimSpace(string(now)), want))
	}
	if len(changed) > 0 {
		report("restored %s", strings.Join(changed, ", "))
	}
	return nil
}
