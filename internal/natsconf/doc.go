// Package natsconf is a typed model of nats.conf, the NATS server
// configuration file, and its writer.
//
// It is the only place in the operator that produces nats.conf text, so the
// rules that keep the file safe live here and nowhere else:
//
//   - Output is deterministic: the same Config always renders to the same
//     bytes, so a hash of the rendered file can drive rollouts and reloads.
//   - Output is readable: two-space indentation, one key per line, `key: value`
//     for scalars and `key {` ... `}` for blocks.
//   - Secrets never appear in the file. Tokens and passwords must be Env
//     values, written as `$NAME`; nats-server reads them from its environment
//     when it parses the file.
//   - Render refuses (with an error, never a panic) anything nats-server's own
//     parser would reject or misread, instead of producing a file that fails
//     only when a pod starts; Check holds the result to per-option rules
//     (option_rules.go) that are no kinder than nats-server's option
//     processing, which only the tests link.
//
// Parser behaviour this package relies on (nats-server v2.15, conf/lex.go and
// conf/parse.go):
//
//   - Double-quoted strings understand exactly the escapes \t \n \r \" \\ and
//     \xHH. A `$NAME` inside a quoted string is literal text, never expanded.
//   - An unquoted `$NAME` is looked up first in the enclosing blocks that have
//     already been parsed (case-sensitive keys), and only then in the
//     environment. A missing variable is a parse error.
//   - The value of an environment variable is itself lexed as a config value:
//     "12345" becomes a number, "yes" a boolean, "{a: b}" a map, "a b" is a
//     syntax error, a backslash starts an escape and a leading '$' names
//     another variable. Generated secrets must be letters and digits starting
//     with a letter.
//   - Unquoted numbers take size suffixes (1k = 1000, 1m = 1000000, 1e = 10^18),
//     so durations and anything else textual are always written quoted.
//   - Top-level keys are matched case-insensitively and many have aliases
//     (pid_file/pidfile, http_port/monitor_port, ...).
package natsconf
