package loopback

import (
	"sort"
	"strings"
)

// This file bridges what a pod sees in a real cluster and this machine
// lacks, inside the harness only: paths in the container's filesystem, and
// a network namespace of its own (every listener on 0.0.0.0 would
// collide). Cluster DNS is real enough to need no rewriting (hosts.go). It rewrites the
// container's args and the nats.conf files it mounts from ConfigMaps; the
// operator's output is never changed anywhere else.

// mount maps a path inside the container to the pod directory that backs it.
type mount struct {
	container string
	host      string
}

// sortMounts puts longer container paths first, so that a mount nested in
// another wins.
func sortMounts(ms []mount) {
	sort.SliceStable(ms, func(i, j int) bool { return len(ms[i].container) > len(ms[j].container) })
}

// rewritePaths replaces every container path that lies under a mount, at a
// path boundary, with the host path: "/data" and "/data/jetstream" move,
// "/database" and "/srv/data" do not. ms must be sorted by sortMounts.
func rewritePaths(s string, ms []mount) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if m, ok := mountAt(s, i, ms); ok {
			b.WriteString(m.host)
			i += len(m.container)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func mountAt(s string, i int, ms []mount) (mount, bool) {
	if s[i] != '/' || (i > 0 && isPathByte(s[i-1])) {
		return mount{}, false
	}
	for _, m := range ms {
		if m.container == "/" || !strings.HasPrefix(s[i:], m.container) {
			continue
		}
		end := i + len(m.container)
		if end == len(s) || s[end] == '/' || !isPathByte(s[end]) {
			return m, true
		}
	}
	return mount{}, false
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/'
}

// listenerBlocks are the top-level nats.conf blocks that open a listener of
// their own, each on 0.0.0.0 unless told otherwise.
var listenerBlocks = map[string]bool{
	"cluster": true, "gateway": true, "leafnodes": true, "leaf": true,
	"websocket": true, "ws": true, "mqtt": true,
}

// bindListeners makes every listener of a nats.conf listen on ip: a `host`
// at the end of each listener block and at the end of the file. A later
// key wins in nats.conf, so these override any host the file sets; the
// monitoring port follows the top-level host by nats-server's own default.
// The file may be written as one JSON object (the official chart writes
// it so), its keys quoted: its top level is then inside the first brace.
func bindListeners(conf, ip string) string {
	hostLine := `host: "` + ip + `"`
	var b strings.Builder
	top := 0 // the depth of the file's top-level keys
	if strings.HasPrefix(strings.TrimSpace(conf), "{") {
		top = 1
	}
	depth := 0
	word, block := "", ""
	inComment := false
	var quote byte
	quoteAt := 0
	for i := 0; i < len(conf); i++ {
		c := conf[i]
		switch {
		case inComment:
			inComment = c != '\n'
		case quote != 0:
			if c == '\\' && quote == '"' && i+1 < len(conf) {
				b.WriteByte(c)
				i++
				c = conf[i]
			} else if c == quote {
				quote = 0
				if depth == top {
					word = conf[quoteAt+1 : i] // a quoted key
				}
			}
		case c == '#' || (c == '/' && i+1 < len(conf) && conf[i+1] == '/'):
			inComment = true
		case c == '"' || c == '\'':
			quote, quoteAt = c, i
		case c == '{':
			if depth == top {
				block = word
			}
			depth++
		case c == '}':
			depth--
			if depth == top && listenerBlocks[block] {
				b.WriteString("\n  " + hostLine + "\n")
			}
		case depth == top && (isWordByte(c)):
			if i == 0 || !isWordByte(conf[i-1]) {
				word = ""
			}
			word += string(c)
		}
		b.WriteByte(c)
	}
	out := strings.TrimRight(b.String(), "\n")
	return out + "\n# loopback kubelet: every listener on this pod's own address\n" + hostLine + "\n"
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// configArg is the config file a nats-server command line names, or "".
func configArg(args []string) string {
	for i, a := range args {
		switch {
		case (a == "-c" || a == "--config" || a == "-config") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--config="):
			return strings.TrimPrefix(a, "--config=")
		case strings.HasPrefix(a, "-config="):
			return strings.TrimPrefix(a, "-config=")
		case strings.HasPrefix(a, "-c="):
			return strings.TrimPrefix(a, "-c=")
		}
	}
	return ""
}
