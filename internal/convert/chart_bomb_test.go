package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/testmem"
)

// doublingConf is n lines of doubling (z0: [x, x], z1: [$z0, $z0], ...),
// each list holding the one before twice, and a passthrough key the
// translation writes as JSON set to the last: 2^n values once expanded,
// from a text of a few hundred bytes.
func doublingConf(n int) string { return multiplyingConf(n, 2) }

// multiplyingConf is n lines, each a list of the one before k times.
func multiplyingConf(n, k int) string {
	var b strings.Builder
	b.WriteString(minimalConf)
	b.WriteString("z0: [x" + strings.Repeat(", x", k-1) + "]\n")
	for i := 1; i < n; i++ {
		ref := fmt.Sprintf("$z%d", i-1)
		fmt.Fprintf(&b, "z%d: [%s%s]\n", i, ref, strings.Repeat(", "+ref, k-1))
	}
	fmt.Fprintf(&b, "server_tags: $z%d\n", n-1)
	return b.String()
}

// TestVariableBombRefusedInABoundedChild: the takeover's PoC, a nats.conf
// of 40 lines of doubling in a chart release's ConfigMap, and its shallow
// kin, 10 lines of sixteenfold lists (16^10 values, 10 deep), converted
// in a child process (testmem) under GOMEMLIMIT=64MiB and an address
// space of 256 MiB over what the child had mapped once it read the
// rendering. The tree is measured before anything reads it, and the
// release is refused naming the limit passed (32 deep, 20000 values) and
// where, within 16 MiB of the child's peak RSS (measured: about 1 MiB;
// the quarter MiB rendering of the third case below takes 7 MiB to read
// as YAML, before its nats.conf is looked at). The careless variant is
// the translation as it was, reading the tree the parser returns with
// nothing measuring it (KUBENATS_TESTMEM_CARELESS=1 go test -run
// TestVariableBombRefusedInABoundedChild ./internal/convert/): its
// json.Marshal of server_tags allocates until the child dies (watched:
// "the child did not report ... out of memory" in both), as the
// operator did, after every restart, at its 128 MiB limit.
//
// The third is aimed at the defence itself: a string of 128 Ki "$a", in
// which every '$' begins a name running to the end of the string (what
// the scan for names must define). Its careless variant is that scan
// unbounded (the names read not counted): 2^34 bytes of definitions
// (watched: out of memory as well).
func TestVariableBombRefusedInABoundedChild(t *testing.T) {
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"doubling", doublingConf(40), "more than 32 blocks and lists deep (passed at server_tags[0][0]"},
		{"sixteenfold", multiplyingConf(10, 16), "more than 20000 values (passed at server_tags["},
		{"dollar run", minimalConf + `write_deadline: "` + strings.Repeat("$a", 128<<10) + `"` + "\n", "more than 1048576 bytes of names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := func() []byte { return []byte(minimalChart(t, tc.conf, "")) }
			decode := convertBomb
			if tc.name == "dollar run" && testmem.Careless() {
				decode = func(in []byte) error {
					docs, err := manifest.Documents(in)
					if err != nil {
						return err
					}
					_, err = chartWithin(docs, "default", confLimits{values: 1 << 30, depth: 32, bytes: 1 << 40})
					return err
				}
			}
			r := testmem.Run(t, 256<<20, input, decode)
			own := r.PeakRSS - r.InputRSS
			t.Logf("peak RSS %s (%s with the rendering read, %s more converting it); error %q",
				testmem.MiB(r.PeakRSS), testmem.MiB(r.InputRSS), testmem.MiB(own), r.Err)
			if !strings.Contains(r.Err, tc.want) {
				t.Errorf("error %q, want it refused with %q", r.Err, tc.want)
			}
			if own > 16<<20 {
				t.Errorf("converting raised the child's peak RSS by %s, over the bound of 16 MiB", testmem.MiB(own))
			}
		})
	}
}

// convertBomb converts a rendering in the child: Chart, or in the
// careless variant the translation of the parser's tree unmeasured.
func convertBomb(in []byte) error {
	docs, err := manifest.Documents(in)
	if err != nil {
		return err
	}
	if !testmem.Careless() {
		_, err = Chart(docs, "default")
		return err
	}
	releases, err := chartReleases(docs, "default")
	if err != nil {
		return err
	}
	r := releases[0]
	// The container's env defined ahead, as the old chartConf did.
	values, err := conf.Parse("SERVER_NAME: \"" + fromThePod + "\"\n" + r.config.Data["nats.conf"])
	if err != nil {
		return err
	}
	tr := &chartTranslation{release: r, cluster: &v1alpha1.NatsCluster{}}
	tr.conf(values, natsContainer(r.sts))
	return nil
}

// TestConfTreeLimits: each limit refuses a tree past it, naming the limit
// and the key path where it was passed, and a nats.conf of the usual
// kind passes. Careless variants (each watched failing): a walk that
// counts only the values it has not seen (a shared list counted once:
// the sixteenfold lists pass, 80 values), depth not bounded (the nested
// lists pass), strings not counted (128 copies of a 1000-byte string
// pass), the names of variables not counted (a definition for each of
// 1001 names).
func TestConfTreeLimits(t *testing.T) {
	limits := confLimits{values: 1000, depth: 8, bytes: 64 << 10}
	nested := "deep: " + strings.Repeat("[", 10) + "x" + strings.Repeat("]", 10) + "\n"
	long := `s0: "` + strings.Repeat("x", 1000) + `"` + "\n"
	for i := 1; i < 8; i++ {
		long += fmt.Sprintf("s%d: [$s%d, $s%d]\n", i, i-1, i-1)
	}
	var manyNames strings.Builder
	manyNames.WriteString("server_tags: [")
	for i := range 1001 {
		fmt.Fprintf(&manyNames, "$v%d, ", i)
	}
	manyNames.WriteString("x]\n")
	usual := `accounts { A { users [ { user: a, permissions { publish { allow: ["x.>", "y"] } } } ] } }
max_payload: 2MB
server_tags: [az:1, rack:2]
`
	for _, tc := range []struct {
		name, text string
		want       []string // "" for accepted
	}{
		{"doubling", doublingConf(40), []string{"more than 8 blocks and lists deep", "passed at server_tags[0]"}},
		{"sixteenfold", multiplyingConf(5, 16), []string{"more than 1000 values", "passed at server_tags["}},
		{"nested lists", nested, []string{"more than 8 blocks and lists deep", "passed at deep[0][0][0][0][0][0][0][0]"}},
		{"doubled strings", long, []string{"more than 65536 bytes", "passed at s6"}},
		{"many names", manyNames.String(), []string{"refers to more than 1000 variables"}},
		{"usual", usual, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chartConf(tc.text, []corev1.EnvVar{{Name: "SERVER_NAME", Value: "$(POD_NAME)"}}, limits)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want %q in it", err, w)
				}
			}
			if strings.Contains(err.Error(), "xxxx") {
				t.Errorf("the error quotes a value: %q", err)
			}
		})
	}
}
