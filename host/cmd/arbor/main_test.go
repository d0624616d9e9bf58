package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

const fixedTime = "2026-01-01T00:00:00Z"

// needEngine skips when the binary embeds the empty placeholder module.
func needEngine(t *testing.T) {
	t.Helper()
	e, err := runtime.New(context.Background(), t.TempDir())
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	e.Close(context.Background())
}

type result struct {
	code           int
	stdout, stderr string
}

// arbor runs the CLI in-process with stdin.
func arbor(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// must runs a command that has to succeed.
func must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := arbor(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("arbor %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newTree makes a small memory root: one entry, plus one linking to it.
func newTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, "", "init", dir)
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), `---
title: Invoice retry policy
summary: failed invoices are retried three times
tags: [billing]
keywords: [invoice, retry]
createdAt: 2025-06-01T10:00:00Z
updatedAt: 2025-06-01T10:00:00Z
---

## Reason
agreed in the billing sync

## Narrative
Failed invoices are retried three times, then escalated to a person.
`)
	writeFile(t, filepath.Join(dir, "engineering/billing/dunning_emails.md"), `---
title: Dunning emails
related: [engineering/billing/invoice_retry_policy.md]
createdAt: 2025-06-02T10:00:00Z
updatedAt: 2025-06-02T10:00:00Z
---

## Narrative
A reminder email goes out after each failed retry.
`)
	return dir
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notes")
	out := must(t, "", "init", dir)
	if !strings.Contains(out, "Initialized") {
		t.Errorf("init output: %q", out)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".arbor")); err != nil || !fi.IsDir() {
		t.Fatalf(".arbor/ not created: %v", err)
	}
	ignore := filepath.Join(dir, ".arbor", ".gitignore")
	if b, err := os.ReadFile(ignore); err != nil || string(b) != api.IgnoreRules {
		t.Fatalf(".arbor/.gitignore: %q, %v", b, err)
	}
	// The rules are the user's once written: a second init keeps an edit.
	writeFile(t, ignore, "*\n!config.json\n")
	if out := must(t, "", "init", dir); !strings.Contains(out, "already") {
		t.Errorf("second init: %q", out)
	}
	if b, _ := os.ReadFile(ignore); string(b) != "*\n!config.json\n" {
		t.Errorf("second init rewrote .gitignore: %q", b)
	}
	// --root names the folder too (build.sh's demo does this).
	other := t.TempDir()
	must(t, "", "--root", other, "init")
	if _, err := os.Stat(filepath.Join(other, ".arbor")); err != nil {
		t.Fatal(err)
	}
}

func TestAddThenSearch(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "--fixed-time", fixedTime, "add",
		"--path", "engineering/billing", "--title", "Refund approval limits",
		"--summary", "support refunds up to 200 EUR", "--narrative", "Refunds above 200 EUR need a billing lead.",
		"--tag", "billing", "--tag", "refunds", "--keyword", "refund", "--relation", "engineering/billing/invoice_retry_policy.md",
		"--fact", "refund limit: 200 EUR without approval [policy]", "--snippet", "limit = 200", "--reason", "support sync")
	if !strings.Contains(out, "✓ ADD") || !strings.Contains(out, "engineering/billing/refund_approval_limits.md") {
		t.Fatalf("add output:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "engineering/billing/refund_approval_limits.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"title: Refund approval limits", "refunds", "200 EUR without approval", "limit = 200", "support sync"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("entry lacks %q:\n%s", want, md)
		}
	}
	out = must(t, "", "search", "refund", "approval", "--root", dir, "--limit", "3")
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "engineering/billing/refund_approval_limits.md") || !strings.Contains(lines[0], "Refund approval limits") {
		t.Fatalf("search output:\n%s", out)
	}
	if !strings.Contains(out, "result") || !strings.Contains(out, "ms") {
		t.Errorf("search footer missing:\n%s", out)
	}
	// ADD refuses an existing entry: exit 1.
	r := arbor(t, "", "--root", dir, "add", "--path", "engineering/billing", "--title", "Refund approval limits", "--reason", "again")
	if r.code != 1 || !strings.Contains(r.stdout, "✗ ADD") || !strings.Contains(r.stderr, "arbor: 1 of 1 operations failed") {
		t.Fatalf("duplicate add: %+v", r)
	}
}

func TestCurateStdinWithFailure(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	ops := `[
 {"type":"UPSERT","path":"personal/preferences","title":"Standing desk routine",
  "content":{"narrative":"Stand for two hours in the morning."},"reason":"desk presets"},
 {"type":"MERGE","path":"engineering/billing/nope.md","mergeTarget":"engineering/billing/invoice_retry_policy.md","reason":"bad source"},
 {"type":"ADD","path":"research/papers","title":"ContextFit","content":{"tags":["paper"]},"reason":"reading list"}
]`
	r := arbor(t, ops, "--root", dir, "--fixed-time", fixedTime, "curate", "-")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "✓ UPSERT") || !strings.HasPrefix(lines[1], "✗ MERGE") ||
		!strings.HasPrefix(lines[2], "✓ ADD") || !strings.Contains(lines[3], "1 failed") {
		t.Fatalf("curate output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "arbor: 1 of 3 operations failed") {
		t.Errorf("stderr: %q", r.stderr)
	}
	// {"operations": [...]} from a file, all good: exit 0.
	file := filepath.Join(t.TempDir(), "ops.json")
	writeFile(t, file, `{"operations":[{"type":"DELETE","path":"research/papers/contextfit.md","reason":"read it"}]}`)
	if out := must(t, "", "--root", dir, "curate", file); !strings.HasPrefix(out, "✓ DELETE") {
		t.Fatalf("curate file:\n%s", out)
	}
	for _, bad := range []string{`{"type":"ADD"}`, `not json`, `42`} {
		r := arbor(t, bad, "--root", dir, "curate")
		if r.code != 1 || !strings.HasPrefix(r.stderr, "arbor: curate: stdin") {
			t.Errorf("curate %q: %+v", bad, r)
		}
	}
}

func TestQueryPrintsTier(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "query", "how often are failed invoices retried?")
	if !strings.Contains(out, "\ntier ") || !strings.Contains(out, " ms") {
		t.Fatalf("query output lacks the tier line:\n%s", out)
	}
	if !strings.Contains(out, "sources:") || !strings.Contains(out, "engineering/billing/invoice_retry_policy.md") {
		t.Fatalf("query output lacks sources:\n%s", out)
	}
}

func TestQueryFromStdinSharesTheCache(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "invoice retry policy\n\n  Invoice retry policy?\n", "--root", dir, "query", "-")
	first := strings.Index(out, "? invoice retry policy\n")
	second := strings.Index(out, "? Invoice retry policy?\n")
	if first < 0 || second < first {
		t.Fatalf("each question should be echoed in order:\n%s", out)
	}
	if !strings.Contains(out[second:], "tier 0 (exact-cache)") || strings.Contains(out[:second], "tier 0") {
		t.Fatalf("the repeated question should come from the cache, and only it:\n%s", out)
	}
	if r := arbor(t, "", "--root", dir, "query", "-"); r.code != 1 || !strings.Contains(r.stderr, "no questions") {
		t.Fatalf("empty stdin: %+v", r)
	}
	// A question longer than a query may be is refused by the engine, with the limit.
	long := strings.Repeat("invoice retry ", 120<<10/14)
	if r := arbor(t, long+"\n", "--root", dir, "query", "-"); r.code != 1 || !strings.Contains(r.stderr, fmt.Sprintf("invalid_params: query is %d bytes, over the 4096-byte limit", len(strings.TrimSpace(long)))) {
		t.Fatalf("a 120 KB question: exit %d, %q", r.code, r.stderr)
	}
	if r := arbor(t, "", "--root", dir, "search", long); r.code != 1 || !strings.Contains(r.stderr, "over the 4096-byte limit") {
		t.Fatalf("a 120 KB search: exit %d, %q", r.code, r.stderr)
	}
	if r := arbor(t, strings.Repeat("x", 2<<20)+"\n", "--root", dir, "query", "-"); r.code != 1 || !strings.Contains(r.stderr, "a line of more than 1 MiB: a question holds at most 4096 bytes") {
		t.Fatalf("a 2 MiB line: exit %d, %q", r.code, r.stderr)
	}
}

func TestShowBacklinks(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "show", "engineering/billing/invoice_retry_policy.md")
	if !strings.HasPrefix(out, "---\ntitle: Invoice retry policy") {
		t.Errorf("show does not start with the markdown:\n%s", out)
	}
	if !strings.Contains(out, "backlinks:\n  ← engineering/billing/dunning_emails.md") {
		t.Fatalf("show lacks the backlink:\n%s", out)
	}
	out = must(t, "", "--root", dir, "show", "engineering/billing/dunning_emails.md")
	if !strings.Contains(out, "relations:\n  → engineering/billing/invoice_retry_policy.md") || !strings.Contains(out, "backlinks: none") {
		t.Fatalf("show relations:\n%s", out)
	}
}

func TestTreeAndStats(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "tree")
	for _, want := range []string{"engineering/\n", "  billing/\n", "    invoice_retry_policy.md — Invoice retry policy\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
	out = must(t, "", "--root", dir, "tree", "--depth", "1")
	if strings.Contains(out, "billing") {
		t.Errorf("tree --depth 1 went deeper:\n%s", out)
	}
	out = must(t, "", "--root", dir, "stats")
	if !strings.Contains(out, "entries    2") || !strings.Contains(out, "engineering  2") || !strings.Contains(out, "maturity   draft 2 · validated 0 · core 0") {
		t.Errorf("stats:\n%s", out)
	}
}

// Each command closes the engine on exit, which writes the batched
// lifecycle signals: six reads make an entry validated (ι 50 + 6×3, less
// the decay of the seconds between them, ≥ 65).
func TestSignalsAreFlushedOnExit(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	const p = "engineering/billing/invoice_retry_policy.md"
	for range 6 {
		must(t, "", "--root", dir, "show", p)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".arbor", "state.json"))
	if err != nil {
		t.Fatalf("no state after show: %v", err)
	}
	var st struct {
		Entries map[string]struct{ Accesses int } `json:"entries"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Entries[p].Accesses != 6 {
		t.Fatalf("state.json = %s (%v), want 6 accesses of %s", b, err, p)
	}
	if out := must(t, "", "--root", dir, "stats"); !strings.Contains(out, "maturity   draft 1 · validated 1 · core 0") {
		t.Fatalf("stats after six reads:\n%s", out)
	}
}

func TestJSONOutput(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	for _, args := range [][]string{
		{"search", "invoice", "--json"},
		{"--json", "query", "invoice retry"},
		{"stats", "--json"},
		{"tree", "--json"},
		{"show", "--json", "engineering/billing/dunning_emails.md"},
	} {
		out := must(t, "", append([]string{"--root", dir}, args...)...)
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%v: output is not a JSON object: %v\n%s", args, err, out)
		}
	}
	out := must(t, "", "--root", dir, "--json", "search", "invoice")
	var res struct {
		Results []struct {
			Path  string  `json:"path"`
			Score float64 `json:"score"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) == 0 || res.Results[0].Score <= 0 {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
}

func TestErrors(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "../etc/passwd"}, 1, "arbor: invalid_path: "},
		{[]string{"show", "engineering/missing.md"}, 1, "not_found"},
		{[]string{"frobnicate"}, 2, `arbor: unknown command "frobnicate"`},
		{[]string{"search"}, 2, "usage: arbor search"},
		{[]string{"search", "x", "--limit", "many"}, 2, "invalid value"},
		{[]string{"show", "a.md", "b.md"}, 2, "wrong number of arguments"},
		{[]string{"add", "--path", "a/b", "--title", "T"}, 2, "--reason is required"},
		{[]string{"--nope", "stats"}, 2, "flag provided but not defined"},
		{[]string{"curate", filepath.Join(dir, "missing.json")}, 1, "no such file"},
	} {
		r := arbor(t, "", append([]string{"--root", dir}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", c.args, r.code, r.stderr, c.code, c.want)
		}
		if c.code == 1 && !strings.HasPrefix(r.stderr, "arbor: ") {
			t.Errorf("%v: stderr %q does not start with arbor:", c.args, r.stderr)
		}
	}
	if r := arbor(t, ""); r.code != 2 || !strings.Contains(r.stderr, "Commands:") {
		t.Errorf("no arguments: %+v", r)
	}
}

func TestHelp(t *testing.T) {
	out := must(t, "", "--help")
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(out, c.example) {
			t.Errorf("--help lacks %s or its example", c.name)
		}
	}
	if strings.Contains(out, "fixed-time") {
		t.Error("--help shows the hidden --fixed-time")
	}
	out = must(t, "", "search", "--help")
	for _, want := range []string{"Usage: arbor search", "--limit", "--root", "--json", "Examples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("search --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fixed-time") {
		t.Error("search --help shows the hidden --fixed-time")
	}
	if out := must(t, "", "help", "add"); !strings.Contains(out, "--reason") || !strings.Contains(out, "--fact") {
		t.Errorf("help add:\n%s", out)
	}
}

func TestRootDiscovery(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	sub := filepath.Join(dir, "engineering", "billing")
	t.Chdir(sub)
	t.Setenv("ARBOR_ROOT", "")
	out := must(t, "", "stats")
	if !strings.Contains(out, "entries    2") {
		t.Fatalf("stats from a subfolder:\n%s", out)
	}
	// ARBOR_ROOT overrides the search; --root overrides ARBOR_ROOT.
	empty := t.TempDir()
	t.Setenv("ARBOR_ROOT", empty)
	if out := must(t, "", "stats"); !strings.Contains(out, "entries    0") {
		t.Fatalf("ARBOR_ROOT ignored:\n%s", out)
	}
	if out := must(t, "", "--root", dir, "stats"); !strings.Contains(out, "entries    2") {
		t.Fatalf("--root ignored:\n%s", out)
	}
	// Outside any root: a clear error.
	t.Setenv("ARBOR_ROOT", "")
	t.Chdir(t.TempDir())
	r := arbor(t, "", "stats")
	if r.code != 1 || !strings.Contains(r.stderr, "not inside an Arbor memory root") {
		t.Fatalf("outside a root: %+v", r)
	}
}

func TestParseFact(t *testing.T) {
	for in, want := range map[string][3]string{
		"auth: imports billing [project]": {"auth", "imports billing", "project"},
		"retries: three":                  {"retries", "three", ""},
		"just a statement":                {"", "just a statement", ""},
		"url: http://x.y/z":               {"url", "http://x.y/z", ""},
	} {
		f := parseFact(in)
		if got := [3]string{f.Subject, f.Statement, f.Category}; got != want {
			t.Errorf("parseFact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBinary builds the command and runs it as a user would.
func TestBinary(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	exe := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	if code, _, stderr := exe("", "--root", dir, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	ops := `[{"type":"ADD","path":"engineering/billing","title":"Invoice retry policy",
	  "content":{"narrative":{"rules":"Failed invoices are retried three times, then escalated."}},"reason":"sync"}]`
	if code, out, stderr := exe(ops, "--root", dir, "curate"); code != 0 || !strings.HasPrefix(out, "✓ ADD") {
		t.Fatalf("curate: %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr := exe("", "--root", dir, "search", "invoice retry")
	if code != 0 || !strings.Contains(out, "engineering/billing/invoice_retry_policy.md") {
		t.Fatalf("search: %d\n%s\n%s", code, out, stderr)
	}
	if code, _, _ := exe("", "bogus"); code != 2 {
		t.Fatalf("usage error: exit %d", code)
	}
}

// snapshot maps every file under dir (the engine's .arbor/ aside) to its
// content, to prove that a refused command changed nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == rootMarker {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed:\n%s", what, p, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

// add refuses a path that leaves the root or is absolute: exit 1, a clear
// message, nothing written inside or outside the root.
func TestAddBadPath(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	parent := filepath.Dir(dir)
	before := snapshot(t, dir)
	outside, _ := os.ReadDir(parent)
	for _, c := range []struct{ path, want string }{
		{"/abs", "absolute paths are not allowed"},
		{filepath.Join(parent, "elsewhere"), "absolute paths are not allowed"},
		{"../x", `".." is not allowed`},
		{"engineering/../../x", `".." is not allowed`},
		{`engineering\billing`, "backslash"},
		{"engineering/.hidden", `starts with "."`},
	} {
		r := arbor(t, "", "--root", dir, "add", "--path", c.path, "--title", "Escape", "--narrative", "x", "--reason", "bad path")
		if r.code != exitError || !strings.Contains(r.stdout, "✗ ADD") || !strings.Contains(r.stdout, c.want) {
			t.Errorf("add --path %q: exit %d, want 1 with %q\nstdout: %s\nstderr: %s", c.path, r.code, c.want, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "arbor: 1 of 1 operations failed") {
			t.Errorf("add --path %q: stderr %q", c.path, r.stderr)
		}
	}
	sameFiles(t, "add with bad paths", before, snapshot(t, dir))
	if now, _ := os.ReadDir(parent); len(now) != len(outside) {
		t.Errorf("files appeared next to the root: %v", now)
	}
	// show refuses them too, before reading anything.
	for _, p := range []string{"../x", "/etc/passwd", `a\b`, "a//b.md"} {
		r := arbor(t, "", "--root", dir, "show", p)
		if r.code != exitError || !strings.Contains(r.stderr, "arbor: invalid_path: ") {
			t.Errorf("show %q: exit %d, stderr %q", p, r.code, r.stderr)
		}
	}
}

const malformed = "---\ntitle: [unclosed\nsummary: a: b: c\n---\n\n## Narrative\nThe zebra crossing rule.\n"

// A file whose front matter cannot be parsed is reported by path, the rest
// of the tree opens, show says what is wrong, and no command overwrites it.
func TestMalformedFrontMatter(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	bad := filepath.Join(dir, "engineering/billing/broken_note.md")
	writeFile(t, bad, malformed)

	r := arbor(t, "", "--root", dir, "stats")
	if r.code != exitOK {
		t.Fatalf("stats: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "entries    2") {
		t.Errorf("the rest of the tree did not open:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "warnings (1)\n  engineering/billing/broken_note.md: ") {
		t.Errorf("stats does not report the file by path:\n%s", r.stdout)
	}
	var stats struct {
		Entries  int `json:"entries"`
		Warnings []struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"warnings"`
	}
	out := must(t, "", "--root", dir, "--json", "stats")
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if stats.Entries != 2 || len(stats.Warnings) != 1 || stats.Warnings[0].Path != "engineering/billing/broken_note.md" ||
		!strings.Contains(stats.Warnings[0].Message, "front matter") {
		t.Errorf("stats --json: %+v", stats)
	}
	if out := must(t, "", "--root", dir, "search", "invoice"); !strings.Contains(out, "invoice_retry_policy.md") {
		t.Errorf("search in the rest of the tree:\n%s", out)
	}

	r = arbor(t, "", "--root", dir, "show", "engineering/billing/broken_note.md")
	if r.code != exitError || !strings.Contains(r.stderr, "engineering/billing/broken_note.md") ||
		!strings.Contains(r.stderr, "malformed front matter") {
		t.Errorf("show of the malformed file: exit %d, stderr %q", r.code, r.stderr)
	}

	// Neither ADD nor UPSERT replaces it; only an UPDATE or DELETE naming
	// it may (docs/ABI.md §4.1).
	r = arbor(t, "", "--root", dir, "add", "--path", "engineering/billing", "--title", "Broken note", "--narrative", "new", "--reason", "overwrite?")
	if r.code != exitError {
		t.Errorf("add over the malformed file: exit %d\n%s", r.code, r.stdout)
	}
	ops := `[{"type":"UPSERT","path":"engineering/billing","title":"Broken note","content":{"narrative":"new"},"reason":"overwrite?"},
	         {"type":"UPSERT","path":"engineering/billing/broken_note.md","content":{"narrative":"new"},"reason":"overwrite?"}]`
	r = arbor(t, ops, "--root", dir, "curate")
	if r.code != exitError || strings.Count(r.stdout, "✗ UPSERT") != 2 || !strings.Contains(r.stdout, "cannot be parsed") {
		t.Errorf("upsert over the malformed file: exit %d\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{{"tree"}, {"query", "zebra crossing"}, {"stats"}} {
		arbor(t, "", append([]string{"--root", dir}, args...)...)
	}
	if b, err := os.ReadFile(bad); err != nil || string(b) != malformed {
		t.Fatalf("the malformed file was changed: %q, %v", b, err)
	}
}

// Operations the engine refuses are reported one by one, the command exits
// 1, and nothing on disk changes.
func TestCurateRefusedOperations(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	before := snapshot(t, dir)
	for _, c := range []struct{ name, op, want string }{
		{"unknown type", `{"type":"FROBNICATE","path":"engineering/billing","title":"X","reason":"r"}`, `unknown operation type "FROBNICATE"`},
		{"missing reason", `{"type":"ADD","path":"engineering/billing","title":"No reason","content":{"narrative":"x"}}`, "reason is required"},
		{"blank reason", `{"type":"ADD","path":"engineering/billing","title":"No reason","reason":"  "}`, "reason is required"},
		{"ADD on an existing entry", `{"type":"ADD","path":"engineering/billing","title":"Invoice retry policy","content":{"narrative":"again"},"reason":"r"}`, "exists"},
		{"MERGE with a missing source", `{"type":"MERGE","path":"engineering/billing/gone.md","mergeTarget":"engineering/billing/invoice_retry_policy.md","reason":"r"}`, "source not found: engineering/billing/gone.md"},
		{"MERGE with a missing target", `{"type":"MERGE","path":"engineering/billing/dunning_emails.md","mergeTarget":"engineering/billing/gone.md","reason":"r"}`, "target not found: engineering/billing/gone.md"},
		{"MERGE without a target", `{"type":"MERGE","path":"engineering/billing/dunning_emails.md","reason":"r"}`, "mergeTarget is required"},
		{"UPDATE of a missing entry", `{"type":"UPDATE","path":"engineering/billing/gone.md","content":{"narrative":"x"},"reason":"r"}`, "not found"},
		{"DELETE of a missing entry", `{"type":"DELETE","path":"engineering/billing/gone.md","reason":"r"}`, "not found"},
	} {
		r := arbor(t, "["+c.op+"]", "--root", dir, "curate", "-")
		if r.code != exitError || !strings.HasPrefix(r.stdout, "✗ ") || !strings.Contains(r.stdout, c.want) ||
			!strings.Contains(r.stderr, "arbor: 1 of 1 operations failed") {
			t.Errorf("%s: exit %d, want 1 and %q\nstdout: %s\nstderr: %s", c.name, r.code, c.want, r.stdout, r.stderr)
		}
		// --json prints the engine's result, failures included.
		r = arbor(t, "["+c.op+"]", "--root", dir, "--json", "curate")
		var res struct {
			Applied []struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"applied"`
			Summary struct {
				Failed int `json:"failed"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != exitError ||
			len(res.Applied) != 1 || res.Applied[0].Status != "failed" || res.Summary.Failed != 1 {
			t.Errorf("%s --json: exit %d, %v\n%s", c.name, r.code, err, r.stdout)
		}
	}
	sameFiles(t, "refused operations", before, snapshot(t, dir))
}

// Input that is not a list of operations is refused before the engine
// starts: exit 1, with the input named.
func TestCurateInvalidInput(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	before := snapshot(t, dir)
	file := filepath.Join(t.TempDir(), "ops.json")
	for _, c := range []struct{ name, input, want string }{
		{"truncated JSON", `[{"type":"ADD",`, "is not valid JSON"},
		{"not JSON", "ADD engineering/billing", "is not valid JSON"},
		{"trailing garbage", `[] []`, "is not valid JSON"},
		{"invalid UTF-8", "[{\"type\":\"ADD\",\"title\":\"\xff\"}]", "is not valid UTF-8"},
		{"a bare operation", `{"type":"ADD","path":"a/b","title":"T","reason":"r"}`, `must hold a JSON array of operations or {"operations": [...]}`},
		{"a number", `42`, "must hold a JSON array"},
		{"empty input", ``, "is not valid JSON"},
	} {
		r := arbor(t, c.input, "--root", dir, "curate")
		if r.code != exitError || !strings.HasPrefix(r.stderr, "arbor: curate: stdin ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s on stdin: exit %d, stderr %q; want 1 with %q", c.name, r.code, r.stderr, c.want)
		}
		writeFile(t, file, c.input)
		r = arbor(t, "", "--root", dir, "curate", file)
		if r.code != exitError || !strings.Contains(r.stderr, "arbor: curate: "+file+" ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s in a file: exit %d, stderr %q; want 1 with %q", c.name, r.code, r.stderr, c.want)
		}
	}
	// Well-formed JSON of the wrong shape inside the list: the engine's
	// invalid_params, exit 1.
	r := arbor(t, `[{"type":"ADD","path":"a/b","title":7,"reason":"r"}]`, "--root", dir, "curate")
	if r.code != exitError || !strings.Contains(r.stderr, "invalid_params") {
		t.Errorf("a title of the wrong type: exit %d, stderr %q", r.code, r.stderr)
	}
	// A misspelt or misplaced key is refused, not dropped with its text,
	// and nothing of the batch is applied.
	for _, c := range []struct{ input, want string }{
		{`[{"type":"ADD","path":"a/b","title":"T","reason":"r"},{"type":"ADD","path":"a/b","title":"U","contnet":{"narrative":"lost"},"reason":"r"}]`,
			`operation 2: operation: unknown key "contnet" (did you mean "content"?)`},
		{`[{"type":"ADD","path":"a/b","title":"T","narrative":"lost","reason":"r"}]`, `unknown key "narrative" (it belongs in "content")`},
		{`{"operations":[],"dryRun":true}`, `params: unknown key "dryRun"`},
	} {
		r := arbor(t, c.input, "--root", dir, "curate")
		if r.code != exitError || !strings.Contains(r.stderr, "invalid_params") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 with %q", c.input, r.code, r.stderr, c.want)
		}
	}
	sameFiles(t, "invalid curate input", before, snapshot(t, dir))
}

// --version prints the release, the ABI and the Go it was built with,
// without a root; --json makes it an object.
func TestVersion(t *testing.T) {
	t.Chdir(t.TempDir())
	r := arbor(t, "", "--version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, fmt.Sprintf("arbor %s (ABI %d, go", api.Version, runtime.ABIVersion)) {
		t.Errorf("--version: exit %d, %q", r.code, r.stdout)
	}
	r = arbor(t, "", "--json", "--version")
	var v struct {
		Version    string
		Module     *string
		ABIVersion int
	}
	// A test binary is built inside the module, not installed from a
	// download: no module version.
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &v) != nil || v.Version != api.Version || v.Module != nil || v.ABIVersion != runtime.ABIVersion {
		t.Errorf("--json --version: exit %d, %q", r.code, r.stdout)
	}
}

// Only a build from a downloaded module (`go install …@version`, which
// records the download's checksum) reports its module version; tests/package
// checks a real one end to end.
func TestModuleVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		main debug.Module
		want string
	}{
		{"go install @version", debug.Module{Path: "github.com/arbormem/arbor", Version: "v0.1.0", Sum: "h1:Ylq0cvzYx0cM6mUQSbnpN6sdmaDjkIWn54KcTqRHj6o="}, "v0.1.0"},
		{"a release candidate", debug.Module{Path: "github.com/arbormem/arbor", Version: "v0.2.0-rc.1", Sum: "h1:Ylq0cvzYx0cM6mUQSbnpN6sdmaDjkIWn54KcTqRHj6o="}, "v0.2.0-rc.1"},
		{"go build in a clone", debug.Module{Path: "github.com/arbormem/arbor", Version: "(devel)"}, ""},
		{"VCS-stamped build in a clone", debug.Module{Path: "github.com/arbormem/arbor", Version: "v0.0.0-20261126130409-0040934aa1b2+dirty"}, ""},
	} {
		if got := moduleVersion(c.main); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Every command answers --help (and -h, and `arbor help CMD`) on stdout
// with exit 0, without needing a memory root.
func TestEveryCommandHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("ARBOR_ROOT", "")
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}, {"--json", c.name, "--help"}} {
			r := arbor(t, "", args...)
			if r.code != exitOK || r.stderr != "" {
				t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
				continue
			}
			for _, want := range []string{"Usage: arbor " + c.synopsis() + "\n", c.help, "--root DIR", "--json", "Examples:\n  " + c.example} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%v lacks %q:\n%s", args, want, r.stdout)
				}
			}
		}
	}
	if r := arbor(t, "", "help", "nope"); r.code != exitUsage {
		t.Errorf("help for an unknown command: exit %d", r.code)
	}
}

// --json prints valid JSON on stdout for the writing commands too: init
// its own result, add and curate the engine's.
func TestJSONOutputOfWritingCommands(t *testing.T) {
	needEngine(t)
	dir := filepath.Join(t.TempDir(), "notes")
	var initRes struct {
		Root    string `json:"root"`
		Created bool   `json:"created"`
	}
	for i, want := range []bool{true, false} {
		out := must(t, "", "--json", "init", dir)
		if err := json.Unmarshal([]byte(out), &initRes); err != nil || initRes.Root != dir || initRes.Created != want {
			t.Fatalf("init --json #%d: %+v, %v\n%s", i+1, initRes, err, out)
		}
	}
	type curated struct {
		Applied []struct {
			Type, Path, Status string
		} `json:"applied"`
		Summary map[string]int `json:"summary"`
	}
	var res curated
	out := must(t, "", "--root", dir, "add", "--json", "--path", "engineering/billing", "--title", "Invoice retry policy",
		"--narrative", "Failed invoices are retried three times.", "--reason", "billing sync")
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Applied) != 1 ||
		res.Applied[0].Path != "engineering/billing/invoice_retry_policy.md" || res.Applied[0].Status != "success" || res.Summary["added"] != 1 {
		t.Fatalf("add --json: %+v, %v\n%s", res, err, out)
	}
	res = curated{}
	ops := `{"operations":[{"type":"UPSERT","path":"engineering/billing/invoice_retry_policy.md","content":{"tags":["billing"]},"reason":"tag it"}]}`
	out = must(t, ops, "--root", dir, "curate", "--json", "-")
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Applied) != 1 || res.Applied[0].Type != "UPSERT" || res.Summary["updated"] != 1 {
		t.Fatalf("curate --json: %+v, %v\n%s", res, err, out)
	}
}

// Root discovery (docs/cli.md): --root, else $ARBOR_ROOT, else the nearest
// folder at or above the current one that holds .arbor/.
func TestRootDiscoveryNearest(t *testing.T) {
	needEngine(t)
	t.Setenv("ARBOR_ROOT", "")
	outer := newTree(t)
	// A root nested in another: from inside it, the nearer one wins.
	inner := filepath.Join(outer, "research")
	must(t, "", "init", inner)
	writeFile(t, filepath.Join(inner, "papers/reading/contextfit.md"), "---\ntitle: ContextFit\n---\n\n## Narrative\nToken-native memory signals.\n")
	deep := filepath.Join(inner, "papers", "reading")
	t.Chdir(deep)
	if out := must(t, "", "stats"); !strings.Contains(out, "entries    1") || !strings.Contains(out, "papers  1") {
		t.Fatalf("stats in the nested root:\n%s", out)
	}
	// From the engine's own folder, the root is the folder holding it.
	t.Chdir(filepath.Join(outer, rootMarker))
	if out := must(t, "", "stats"); !strings.Contains(out, "engineering  2") {
		t.Fatalf("stats from inside .arbor/:\n%s", out)
	}
	// A file named .arbor does not make a root.
	plain := t.TempDir()
	writeFile(t, filepath.Join(plain, rootMarker), "not a folder")
	t.Chdir(plain)
	if r := arbor(t, "", "stats"); r.code != exitError || !strings.Contains(r.stderr, "not inside an Arbor memory root") {
		t.Fatalf("a file named .arbor was taken for a root: %+v", r)
	}
	// An explicit root that does not exist, or is a file, is an error.
	for _, bad := range []string{filepath.Join(plain, "missing"), filepath.Join(plain, rootMarker)} {
		if r := arbor(t, "", "--root", bad, "stats"); r.code != exitError || !strings.Contains(r.stderr, "--root "+bad) {
			t.Errorf("--root %s: %+v", bad, r)
		}
		t.Setenv("ARBOR_ROOT", bad)
		if r := arbor(t, "", "stats"); r.code != exitError || !strings.Contains(r.stderr, "ARBOR_ROOT "+bad) {
			t.Errorf("ARBOR_ROOT=%s: %+v", bad, r)
		}
		t.Setenv("ARBOR_ROOT", "")
	}
}

// init without DIR makes a root of the folder the other commands would
// use: --root, else $ARBOR_ROOT, else the current one.
func TestInitFollowsRootDiscovery(t *testing.T) {
	cwd, env, flag := t.TempDir(), t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("ARBOR_ROOT", env)
	must(t, "", "init")
	if _, err := os.Stat(filepath.Join(env, rootMarker)); err != nil {
		t.Errorf("init ignored ARBOR_ROOT: %v", err)
	}
	must(t, "", "--root", flag, "init")
	if _, err := os.Stat(filepath.Join(flag, rootMarker)); err != nil {
		t.Errorf("init ignored --root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, rootMarker)); err == nil {
		t.Error("init made the current folder a root while a root was named")
	}
	t.Setenv("ARBOR_ROOT", "")
	must(t, "", "init")
	if _, err := os.Stat(filepath.Join(cwd, rootMarker)); err != nil {
		t.Errorf("init without a named root: %v", err)
	}
	// A file in the way: exit 1.
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, "x")
	if r := arbor(t, "", "init", file); r.code != exitError || !strings.HasPrefix(r.stderr, "arbor: init ") {
		t.Errorf("init of a file: %+v", r)
	}
}

// A tree kept in git stays clean: read-only commands change no file of
// the tree, and everything the engine keeps in .arbor/ (index, signals,
// audit log, manifest) is ignored, so after a write git sees the entry
// and its context files only.
func TestGitSeesEntriesOnly(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, append([]string{"-c", "user.name=Arbor", "-c", "user.email=arbor@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	git("init", "-q")
	must(t, "", "--root", dir, "stats") // the first open writes .arbor/.gitignore
	rules, err := os.ReadFile(filepath.Join(dir, ".arbor/.gitignore"))
	if err != nil || !strings.Contains(string(rules), "\n*\n") {
		t.Fatalf(".arbor/.gitignore: %q, %v", rules, err)
	}
	git("add", "-A")
	if staged := git("diff", "--cached", "--name-only"); strings.Contains(staged, ".arbor") {
		t.Fatalf("git add -A staged the engine's state:\n%s", staged)
	}
	git("commit", "-q", "-m", "notes")

	before := snapshot(t, dir)
	for _, args := range [][]string{
		{"query", "how often are failed invoices retried?"},
		{"search", "invoice"},
		{"show", "engineering/billing/invoice_retry_policy.md"},
		{"tree"}, {"stats"}, {"doctor"},
	} {
		must(t, "", append([]string{"--root", dir}, args...)...)
		if st := git("status", "--porcelain"); st != "" {
			t.Fatalf("after arbor %s, git status:\n%s", args[0], st)
		}
	}
	sameFiles(t, "read-only commands", before, snapshot(t, dir))

	must(t, "", "--root", dir, "add", "--path", "engineering/billing", "--title", "Refund limits",
		"--narrative", "Refunds above 200 EUR need a billing lead.", "--reason", "support sync")
	st := git("status", "--porcelain", "--untracked-files=all")
	if !strings.Contains(st, "?? engineering/billing/refund_limits.md\n") || strings.Contains(st, ".arbor") {
		t.Fatalf("after add, git status:\n%s", st)
	}
}
