package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every command exits 0 when it works, 1 when it fails at run time and 2
// for a mistake in the command line; usage errors print the synopsis.
func TestExitCodes(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	outside := filepath.Join(t.TempDir(), "notes.md") // ingest refuses a file inside the root
	writeFile(t, outside, "# Notes\n\nInvoices are retried.\n")
	remote := bareRemote(t)
	ok := map[string][]string{
		"init":       {"init", t.TempDir()},
		"add":        {"add", "--path", "a/b", "--title", "T", "--reason", "r"},
		"curate":     {"curate", "-"},
		"mv":         {"mv", "a/b/t.md", "c/d", "--reason", "r"},
		"rm":         {"rm", "a/b/u.md", "--reason", "r"},
		"search":     {"search", "invoice"},
		"query":      {"query", "invoice retry"},
		"show":       {"show", "engineering/billing/invoice_retry_policy.md"},
		"context":    {"context", "engineering/billing/invoice_retry_policy.md"},
		"tree":       {"tree"},
		"stats":      {"stats"},
		"recent":     {"recent", "--since", "7d"},
		"status":     {"status"},
		"tidy":       {"tidy"},
		"doctor":     {"doctor"},
		"completion": {"completion", "bash"},
		"ingest":     {"ingest", outside},
		"sync":       {"sync", "--remote", remote},
	}
	fail := map[string][]string{
		"init":       {"init", filepath.Join(dir, "engineering/billing/invoice_retry_policy.md")},
		"add":        {"add", "--path", "../x", "--title", "T", "--reason", "r"},
		"curate":     {"curate", filepath.Join(dir, "none.json")},
		"mv":         {"mv", "a/b/none.md", "c/d", "--reason", "r"},
		"rm":         {"rm", "a/b/none.md", "--reason", "r"},
		"search":     {"search", "--root", filepath.Join(dir, "missing"), "x"},
		"query":      {"query", "--root", filepath.Join(dir, "missing"), "x"},
		"show":       {"show", "nope.md"},
		"context":    {"context", "nope.md"},
		"tree":       {"tree", "nowhere"},
		"stats":      {"stats", "--root", filepath.Join(dir, "missing")},
		"recent":     {"recent", "--since", "lately"},
		"status":     {"status", "--root", filepath.Join(dir, "missing")},
		"tidy":       {"tidy", "--kind", "dedupe"},
		"mcp":        {"mcp", "--root", filepath.Join(dir, "missing")},
		"serve":      {"serve", "--stop"}, // no server runs
		"doctor":     {"doctor", "--root", filepath.Join(dir, "missing")},
		"completion": {"completion", "tcsh"},
		"ingest":     {"ingest", filepath.Join(dir, "no-such-file.md")},
		"sync":       {"sync", "--remote", filepath.Join(dir, "no-such-remote.git")},
	}
	for _, c := range commands {
		if args, found := ok[c.name]; found {
			stdin := ""
			if c.name == "curate" {
				stdin = `[{"type":"UPSERT","path":"a/b","title":"U","reason":"r"}]`
			}
			if r := arbor(t, stdin, append([]string{"--root", dir}, args...)...); r.code != exitOK {
				t.Errorf("%v: exit %d, want 0\n%s", args, r.code, r.stderr)
			}
		}
		want := exitError
		if c.name == "completion" {
			want = exitUsage // an unknown shell is a usage mistake
		}
		if args, found := fail[c.name]; found {
			if r := arbor(t, "", append([]string{"--root", dir}, args...)...); r.code != want || !strings.HasPrefix(r.stderr, "arbor: ") {
				t.Errorf("%v: exit %d, stderr %q; want %d", args, r.code, r.stderr, want)
			}
		} else {
			t.Errorf("no failing case for %s", c.name)
		}
		for _, args := range [][]string{{c.name, "--no-such-flag"}, {c.name, "--color", "sometimes"}} {
			r := arbor(t, "", append([]string{"--root", dir}, args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "usage: arbor "+c.synopsis()) {
				t.Errorf("%v: exit %d, stderr %q; want 2 with the synopsis", args, r.code, r.stderr)
			}
		}
	}
}

// Colors appear on request (or on a terminal), never in piped output, and
// the text is the same once they are stripped.
func TestColors(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	strip := func(s string) string {
		for {
			i := strings.Index(s, "\x1b[")
			if i < 0 {
				return s
			}
			j := strings.IndexByte(s[i:], 'm')
			s = s[:i] + s[i+j+1:]
		}
	}
	for _, args := range [][]string{
		{"search", "invoice"}, {"query", "invoice retry"}, {"tree"}, {"stats"}, {"doctor"},
		{"show", "engineering/billing/dunning_emails.md"},
	} {
		// Each on a tree of its own: a query's access changes the next
		// one's lifecycle scores.
		plain := must(t, "", append([]string{"--root", newTree(t), "--fixed-time", fixedTime}, args...)...)
		if strings.Contains(plain, "\x1b[") {
			t.Errorf("%v: escapes in piped output:\n%q", args, plain)
		}
		colored := must(t, "", append([]string{"--root", newTree(t), "--fixed-time", fixedTime, "--color", "always"}, args...)...)
		if !strings.Contains(colored, "\x1b[") {
			t.Errorf("%v --color always: no escapes", args)
		}
		if args[0] == "doctor" {
			continue // it measures the start-up time
		}
		if got := strip(colored); dropTimes(got) != dropTimes(plain) {
			t.Errorf("%v: colored text differs once stripped:\n%s\nvs\n%s", args, got, plain)
		}
	}
	// NO_COLOR turns off auto, not an explicit request.
	t.Setenv("NO_COLOR", "1")
	if out := must(t, "", "--root", dir, "--color", "always", "tree"); !strings.Contains(out, "\x1b[") {
		t.Error("--color always ignored under NO_COLOR")
	}
	if out := must(t, "", "--root", dir, "--color", "auto", "tree"); strings.Contains(out, "\x1b[") {
		t.Error("--color auto colored a pipe")
	}
	// The decision itself, on a real terminal device when there is one.
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if on, _ := colorFor("auto", tty); on {
			t.Error("NO_COLOR set, yet auto colors a terminal")
		}
		t.Setenv("NO_COLOR", "")
		t.Setenv("TERM", "xterm")
		if on, _ := colorFor("auto", tty); !on {
			t.Error("auto does not color a terminal")
		}
	}
	if on, _ := colorFor("auto", os.Stdout); on && !isTerminal(os.Stdout) {
		t.Error("auto colored a non-terminal")
	}
}

// dropTimes removes latencies ("12 ms", "0.2 ms"), which differ run to run.
func dropTimes(s string) string {
	var out []string
	for _, w := range strings.Fields(s) {
		if w == "ms" && len(out) > 0 {
			out = out[:len(out)-1]
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// --json gives one JSON value on stdout for every command that prints a
// result.
func TestJSONEverywhere(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	for _, c := range commands {
		var args []string
		switch c.name {
		case "mcp":
			continue // speaks JSON-RPC on stdout already
		case "serve":
			continue // runs until stopped; TestServeStop checks serve --stop --json
		case "init":
			args = []string{"init", t.TempDir()}
		case "add":
			args = []string{"add", "--path", "x/y", "--title", "J", "--reason", "r"}
		case "curate":
			args = []string{"curate", "-"}
		case "mv":
			args = []string{"mv", "x/y/j.md", "x/z", "--reason", "r"}
		case "rm":
			args = []string{"rm", "x/y/k.md", "--reason", "r"}
		case "search", "query":
			args = []string{c.name, "invoice"}
		case "show", "context":
			args = []string{c.name, "engineering/billing/invoice_retry_policy.md"}
		case "completion":
			args = []string{"completion", "zsh"}
		case "sync":
			args = []string{"sync", "--remote", bareRemote(t)}
		case "ingest":
			outside := filepath.Join(t.TempDir(), "notes.md")
			writeFile(t, outside, "# Notes\n\nInvoices are retried.\n")
			args = []string{"ingest", outside}
		default:
			args = []string{c.name}
		}
		stdin := ""
		if c.name == "curate" {
			stdin = `[{"type":"UPSERT","path":"x/y","title":"K","reason":"r"}]`
		}
		out := must(t, stdin, append([]string{"--root", dir, "--json"}, args...)...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s --json: %v\n%s", c.name, err, out)
		}
	}
}

func TestStatsDisk(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	must(t, "", "--root", dir, "add", "--path", "a/b", "--title", "T", "--reason", "r")
	out := must(t, "", "--root", dir, "--json", "stats")
	var s statsReport
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Entries != 3 || s.Domains["engineering"] != 2 || s.Domains["a"] != 1 || s.Disk.Index.Files == 0 || s.Disk.Index.Bytes == 0 ||
		s.Disk.AuditLines != 1 || s.Disk.Audit.Bytes == 0 {
		t.Fatalf("stats --json: %s", out)
	}
	// A log rotated out of audit.jsonl (core/internal/curate) still counts.
	writeFile(t, filepath.Join(dir, ".arbor", "audit.20260101T000000Z.jsonl"), "{}\n{}\n")
	out = must(t, "", "--root", dir, "stats")
	for _, want := range []string{"entries    3\n", "maturity   draft 3 · validated 0 · core 0\n", "index      ", " files · ", "audit      ", "3 operations", "domains\n", "  a            1\n", "  engineering  2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctor(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	writeFile(t, filepath.Join(dir, "notes/broken.md"), "---\ntitle: [unclosed\n---\nbody\n")
	t.Setenv("ARBOR_LLM_PROVIDER", "openai")
	t.Setenv("ARBOR_LLM_MODEL", "gpt-4o-mini")
	t.Setenv("OPENAI_API_KEY", "sk-secret-value")
	var rep doctorReport
	out := must(t, "", "--root", dir, "--json", "doctor")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sk-secret-value") {
		t.Fatal("doctor printed an API key")
	}
	status := map[string]check{}
	for _, c := range rep.Checks {
		status[c.Name] = c
	}
	want := map[string]string{"root": checkOK, ".arbor": checkOK, "engine": checkOK, "tree": checkOK, "files": checkWarn,
		"index": checkInfo, "state": checkInfo, "audit": checkInfo, "llm": checkOK}
	for name, st := range want {
		if status[name].Status != st {
			t.Errorf("check %s: %+v, want %s", name, status[name], st)
		}
	}
	if !rep.OK || rep.Root != dir || !strings.Contains(strings.Join(status["files"].Items, " "), "notes/broken.md") ||
		!strings.HasPrefix(status["llm"].Detail, "openai ") || !strings.Contains(status["llm"].Detail, "key from OPENAI_API_KEY") {
		t.Fatalf("doctor: %s", out)
	}
	// The second run finds what the first one's close persisted.
	out = must(t, "", "--root", dir, "doctor")
	for _, want := range []string{"✓ index", "reused", "✓ root", "(from --root)", "! files", "notes/broken.md", "no problems found"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if status["links"].Status != checkOK {
		t.Errorf("links: %+v", status["links"])
	}
	// Symbolic links: one inside the tree is not followed, what it leads to
	// read under its own name, worth a warning; one leading out is not read.
	if err := os.Symlink("../notes", filepath.Join(dir, "engineering", "notes-link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	out = must(t, "", "--root", dir, "--json", "doctor")
	rep = doctorReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if c.Name == "links" && (c.Status != checkWarn || !strings.Contains(c.Detail, "read once, under its own name") ||
			!slices.Equal(c.Items, []string{"engineering/notes-link → notes (a folder)", "out"})) {
			t.Errorf("links: %+v", c)
		}
	}
	os.Remove(filepath.Join(dir, "engineering", "notes-link"))
	os.Remove(filepath.Join(dir, "out"))
	// No root: a failed check and exit 1, with the LLM settings still shown.
	t.Setenv("ARBOR_ROOT", "")
	t.Chdir(t.TempDir())
	r := arbor(t, "", "doctor")
	if r.code != exitError || !strings.Contains(r.stdout, "✗ root") || !strings.Contains(r.stdout, "llm") {
		t.Fatalf("doctor outside a root: %+v", r)
	}
	// A root config file that cannot be read would stop arbor query: a
	// failed check naming the file.
	writeFile(t, filepath.Join(dir, ".arbor", "config.json"), "{not json")
	r = arbor(t, "", "--root", dir, "doctor")
	if r.code != exitError || !strings.Contains(r.stdout, "✗ llm") || !strings.Contains(r.stdout, "config.json") {
		t.Fatalf("doctor with a broken config file: %+v", r)
	}
}

// The completion scripts parse, and bash's completes commands, flags and
// flag values.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		script := must(t, "", "completion", sh)
		for _, c := range commands {
			if !strings.Contains(script, c.name) {
				t.Errorf("%s script lacks %s", sh, c.name)
			}
		}
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s not installed: script not parsed", sh)
			continue
		}
		file := filepath.Join(t.TempDir(), "arbor."+sh)
		writeFile(t, file, script)
		if out, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	file := filepath.Join(t.TempDir(), "arbor.bash")
	writeFile(t, file, must(t, "", "completion", "bash"))
	for line, want := range map[string]string{
		"arbor st":                    "stats status",
		"arbor sta":                   "stats status",
		"arbor statu":                 "status",
		"arbor se":                    "search serve",
		"arbor ser":                   "serve",
		"arbor serve --s":             "--stop",
		"arbor search --l":            "--limit",
		"arbor --color al":            "always",
		"arbor completion z":          "zsh",
		"arbor --root /tmp tree --de": "--depth",
	} {
		words := strings.Fields(line)
		script := ". " + file + "\nCOMP_WORDS=(" + line + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_arbor\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("complete %q: %q (%v), want %q", line, out, err, want)
		}
	}
}
