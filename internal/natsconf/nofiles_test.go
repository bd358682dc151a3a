package natsconf

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// deepZero reaches /dev/zero from any working directory: nats-server joins
// an include path to the directory of the file being parsed, "." for a
// string, so even "/dev/zero" is read relative to the working directory
// (which is / in the operator's container).
var deepZero = strings.Repeat("../", 40) + "dev/zero"

// maxCheckAlloc bounds what one check may allocate. Reading /dev/zero
// allocates hundreds of MiB in under a second, then all there is.
const maxCheckAlloc = 32 << 20

// boundedCall runs check and fails the test unless it returns within a few
// seconds having allocated less than maxCheckAlloc. It returns check's
// error.
func boundedCall(t *testing.T, check func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() { done <- check() }()
	select {
	case err := <-done:
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > maxCheckAlloc {
			t.Errorf("the check allocated %d MiB", grew>>20)
		}
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the check did not return within 5s")
		return nil
	}
}

func TestCheckRefusesFileReadingPassthroughQuickly(t *testing.T) {
	for name, extra := range map[string]map[string]any{
		"operator":                      {"operator": "/dev/zero"},
		"operator, relative":            {"operator": deepZero},
		"resolver":                      {"resolver": map[string]any{"type": "full", "dir": "/dev/zero"}},
		"tls of a listener":             {"websocket": map[string]any{"port": jsonNumber("8080"), "tls": map[string]any{"cert_file": "/dev/zero", "key_file": "/dev/zero"}}},
		"include as a key":              {"include": map[string]any{"a": "b"}},
		"include in another case":       {"INCLUDE": deepZero},
		"include nested in a block":     {"server_metadata": map[string]any{"include": map[string]any{"x": deepZero}}},
		"log file":                      {"log_file": "/dev/zero"},
		"operator in a folded spelling": {"OPERATOR": "/dev/zero"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &Config{Port: 4222, Extra: extra}
			err := boundedCall(t, cfg.Check)
			if name == "include nested in a block" {
				// Quoted, it is a key of server_metadata: nothing is read, and
				// nats-server accepts the odd metadata as a map it ignores or
				// refuses; either way the check came back.
				return
			}
			if err == nil {
				t.Fatalf("Check accepted %v", extra)
			}
		})
	}
}

// TestCheckRenderedRefusesFileReadsItDidNotWrite: CheckRendered guards
// itself, should a writer bug ever let a directive or a file-reading key
// through.
func TestCheckRenderedRefusesFileReadsItDidNotWrite(t *testing.T) {
	for name, text := range map[string]string{
		"include directive":               "include \"/dev/zero\"\n",
		"include directive, relative":     "include " + deepZero + "\n",
		"include in upper case, indented": "debug: true\n  INCLUDE " + deepZero + "\n",
		"include with a tab":              "include\t" + deepZero + "\n",
		"include inside a block":          "server_metadata {\n  include " + deepZero + "\n}\n",
		"include after a brace, one line": "server_metadata { include " + deepZero + " }\n",
		"include after a comma":           "debug: true, include " + deepZero + "\n",
		"include with U+0130":             "\u0130NCLUDE " + deepZero + "\n",
		"operator key":                    "operator: \"/dev/zero\"\n",
		"operator key in another case":    "Operator: \"" + deepZero + "\"\n",
		"resolver dir":                    "resolver { type: full, dir: \"/dev/zero\" }\n",
		"tls certificates":                "tls { cert_file: \"/dev/zero\", key_file: \"/dev/zero\" }\n",
		"mqtt with tls":                   "mqtt { port: 1883, tls { cert_file: \"/dev/zero\", key_file: \"/dev/zero\" } }\n",
	} {
		t.Run(name, func(t *testing.T) {
			err := boundedCall(t, func() error { return CheckRendered([]byte(text)) })
			if err == nil {
				t.Fatalf("CheckRendered accepted %q", text)
			}
		})
	}
}

func TestCheckEnvStringNeverFollowsInclude(t *testing.T) {
	for _, value := range []string{
		"include /dev/zero",
		"x\ninclude /dev/zero",
		"x\ninclude " + deepZero,
		"{include " + deepZero + "}",
		"{ INCLUDE \"" + deepZero + "\" }",
		"abc, include " + deepZero,
		"abc; include " + deepZero,
		"abc\r\n\u0130nclude " + deepZero, // strings.ToLower folds U+0130 to i
	} {
		err := boundedCall(t, func() error { return CheckEnvString(value) })
		if err == nil {
			t.Errorf("CheckEnvString(%q) = nil", value)
		} else if strings.Contains(err.Error(), "dev/zero") {
			t.Errorf("CheckEnvString(%q) = %v: the message repeats the value", value, err)
		}
	}
}

func TestCheckEnvStringKeepsOutOfTheEnvironment(t *testing.T) {
	t.Setenv("KUBENATS_TEST_VALUE", "abc")
	err := CheckEnvString("$KUBENATS_TEST_VALUE")
	if err == nil || !strings.Contains(err.Error(), "variable") {
		t.Fatalf("CheckEnvString($VAR) = %v, want the variable refusal", err)
	}
	if err := CheckEnvString("$2a$11$abcdefghijklmnopqrstuv"); err != nil {
		t.Errorf("a bcrypt-looking value: %v", err)
	}
}
