package loopback

import "strings"

// podLocalArgs moves the pod-local addresses of a container's arguments to
// the address the pod's containers share here. In a real pod every
// container shares one network namespace: 127.0.0.1 (or localhost) reaches
// the other containers, and a listener on ":7777" takes the port on the
// pod's addresses only. In the loopback cluster every pod shares the
// machine's namespace, and a pod's own address plays both parts: its
// containers reach each other on it, and a listener with no host is bound
// to it (on every address it would take the port for all pods at once).
func podLocalArgs(args []string, addr string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "127.0.0.1", addr)
		a = strings.ReplaceAll(a, "//localhost:", "//"+addr+":")
		a = strings.ReplaceAll(a, "=localhost:", "="+addr+":")
		// A flag whose value is an address without a host: ":7777", or
		// "0.0.0.0:7777".
		if flag, value, ok := strings.Cut(a, "="); ok {
			switch {
			case strings.HasPrefix(value, ":") && isPort(value[1:]):
				a = flag + "=" + addr + value
			case strings.HasPrefix(value, "0.0.0.0:") && isPort(value[len("0.0.0.0:"):]):
				a = flag + "=" + addr + value[len("0.0.0.0"):]
			}
		}
		out[i] = a
	}
	return out
}

// isPort: s is a port number's digits.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
