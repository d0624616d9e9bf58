package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	if out := must(t, "", "init", dir); !strings.Contains(out, "already") {
		t.Errorf("second init: %q", out)
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
	if !strings.Contains(out, "entries    2") || !strings.Contains(out, "engineering  2") {
		t.Errorf("stats:\n%s", out)
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
	for _, want := range []string{"Usage: arbor search", "--limit", "--root", "--json", "Example:"} {
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
	needEngine(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "arbor")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
