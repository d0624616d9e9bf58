package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

// arbor tidy --apply with the model writing the merge, against the
// scripted server: the fixture's invoice policy and a copy of it saved
// later with one fact more (as in tests/llm/e2e.test.mjs), merged by
// scripts/tidy.json.

const (
	tidyKeep = "engineering/billing/invoice_retry_policy.md"
	tidyCopy = "engineering/billing/invoice_retry_policy_copy.md"
)

// tidyLLMRoot is the fixture with the planted copy.
func tidyLLMRoot(t *testing.T) string {
	t.Helper()
	dir := llmRoot(t)
	orig, err := os.ReadFile(filepath.Join(dir, tidyKeep))
	if err != nil {
		t.Fatal(err)
	}
	copyText := strings.Replace(string(orig), "updatedAt: 2026-01-12T09:00:00Z", "updatedAt: 2026-02-12T09:00:00Z", 1) + "\n## Facts\n- retries: three\n"
	writeFile(t, filepath.Join(dir, tidyCopy), copyText)
	return dir
}

func tidyJSON(t *testing.T, dir string, args ...string) api.TidyResult {
	t.Helper()
	out := must(t, "", append([]string{"--root", dir, "--fixed-time", "2026-03-01T00:00:00Z", "--json", "tidy", "--kind", "merge"}, args...)...)
	var res api.TidyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return res
}

// TestLLMTidy: the model's merged entry lands, the copy is gone, the
// trace is in the result; the plan alone asks no model.
func TestLLMTidy(t *testing.T) {
	dir := tidyLLMRoot(t)
	srv := model(t, "openai-compatible", "tidy.json")
	if plan := tidyJSON(t, dir); len(plan.Suggestions) != 1 || plan.Applied != nil || len(srv.Requests()) != 0 {
		t.Fatalf("plan: %+v, %d model calls", plan, len(srv.Requests()))
	}
	res := tidyJSON(t, dir, "--apply")
	if len(res.Suggestions) != 1 || res.Applied == nil || res.Applied.Summary.Merged != 1 {
		t.Fatalf("apply: %+v", res)
	}
	if s := res.Suggestions[0]; s.MergedBy != api.MergedByModel || s.Warning != "" {
		t.Fatalf("suggestion: %+v", s)
	}
	if res.LLM == nil || len(res.LLM.Steps) != 1 || res.LLM.Steps[0].Purpose != "tidy" || res.LLM.InputTokens != 400 {
		t.Fatalf("trace: %+v", res.LLM)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	b := body(t, reqs[0])
	if b["temperature"] != 0.2 || b["tools"] != nil || !strings.Contains(fmt.Sprint(b["messages"]), "=== entry: "+tidyCopy+" ===") {
		t.Errorf("request: %v", b)
	}
	keep := res.Suggestions[0].Paths[0]
	md, err := os.ReadFile(filepath.Join(dir, keep))
	if err != nil || !strings.Contains(string(md), "Both copies say so.") || !strings.Contains(string(md), "retries: three") {
		t.Fatalf("merged entry: %v\n%s", err, md)
	}
	gone := res.Suggestions[0].Paths[1]
	if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", gone, err)
	}
	if out := must(t, "", "--root", dir, "query", "--no-llm", "invoices retried escalated billing lead"); !strings.Contains(out, keep) || strings.Contains(out, gone) {
		t.Errorf("query after tidy:\n%s", out)
	}
}

// TestLLMTidyGarbage: an answer that is no entry leaves the group to the
// deterministic merge, with the warning printed; --no-llm asks no model.
func TestLLMTidyGarbage(t *testing.T) {
	dir := tidyLLMRoot(t)
	srv := model(t, "openai-compatible", "")
	srv.Push(llmtest.Step{Reply: &llmtest.Reply{Content: "Sure! Here is the merged entry: the policy retries invoices three times."}})
	out := must(t, "", "--root", dir, "--color", "never", "tidy", "--kind", "merge", "--apply")
	for _, want := range []string{"warning: the model's merge cannot be used: not an entry: it does not start with front matter (---); merged deterministically",
		"1 merged", "model: 1 call to openai-compatible scripted-large"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The copy, with its fact, is the fuller entry: the policy merges into it.
	if _, err := os.Stat(filepath.Join(dir, tidyKeep)); !os.IsNotExist(err) {
		t.Errorf("the policy was not merged: %v\n%s", err, out)
	}
	md, _ := os.ReadFile(filepath.Join(dir, tidyCopy))
	if strings.Contains(string(md), "Sure!") || !strings.Contains(string(md), "retries: three") {
		t.Errorf("merged entry:\n%s", md)
	}

	dir = tidyLLMRoot(t)
	res := tidyJSON(t, dir, "--apply", "--no-llm")
	if res.Applied.Summary.Merged != 1 || res.LLM != nil || res.Suggestions[0].MergedBy != "" || len(srv.Requests()) != 1 {
		t.Fatalf("--no-llm: %+v, %d model calls", res, len(srv.Requests()))
	}
}

// TestLLMTidyCancel: the caller giving up while the model writes the
// merge (Ctrl-C in the CLI) cancels the continuation; nothing is merged.
func TestLLMTidyCancel(t *testing.T) {
	dir := tidyLLMRoot(t)
	steps, err := llmtest.LoadScript(filepath.Join(llmFixture, "scripts", "tidy.json"))
	if err != nil {
		t.Fatal(err)
	}
	steps[0].DelayMs = 60000
	srv := model(t, "openai-compatible", "")
	srv.Push(steps...)
	before := treeSnapshot(t, dir)
	eng, client := drivenEngine(t, dir)
	ctx := context.Background()
	cctx := cancelAfter(ctx, srv, 1)
	_, err = eng.Drive(cctx, "tidy", api.TidyParams{Kinds: []string{api.TidyMerge}, Apply: true, LLM: true}, client)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if _, err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if after := treeSnapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the tree changed:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor", "audit.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the audit log was written: %v", err)
	}
}
