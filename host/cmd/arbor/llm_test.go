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
	"time"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
	"github.com/arbormem/arbor/host/runtime"
)

// The LLM tiers and curation end to end: the arbor command with the real
// provider clients (host/llm) talking to the scripted server. The tree and
// the scripts are shared with the Node suite (tests/llm/e2e.test.mjs).

const llmQuestion = "failed retry escalation"

var llmFixture = filepath.Join("..", "..", "..", "tests", "llm")

// llmRoot copies the fixture tree into a new memory root.
func llmRoot(t *testing.T) string {
	t.Helper()
	needEngine(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(llmFixture, "tree"))); err != nil {
		t.Fatal(err)
	}
	must(t, "", "init", dir)
	return dir
}

// model starts the scripted server playing the named script and points
// the environment's LLM configuration at it.
func model(t *testing.T, provider string, name string) *llmtest.Server {
	t.Helper()
	var steps []llmtest.Step
	if name != "" {
		var err error
		if steps, err = llmtest.LoadScript(filepath.Join(llmFixture, "scripts", name)); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.New(steps)
	t.Cleanup(srv.Close)
	base := srv.URL + "/v1"
	if provider == "anthropic" {
		base = srv.URL
	}
	noLLMConfig(t)
	t.Setenv(hostllm.EnvProvider, provider)
	t.Setenv(hostllm.EnvBaseURL, base)
	t.Setenv(hostllm.EnvModel, "scripted-large")
	t.Setenv(hostllm.EnvAPIKey, "sk-e2e")
	return srv
}

// noLLMConfig clears every LLM setting the user's environment might hold.
func noLLMConfig(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, k := range []string{hostllm.EnvProvider, hostllm.EnvBaseURL, hostllm.EnvModel, hostllm.EnvAPIKey, hostllm.EnvTimeout, hostllm.EnvMaxRetries} {
		t.Setenv(k, "")
	}
}

// askJSON runs arbor query --json and decodes the result.
func askJSON(t *testing.T, dir string, args ...string) (api.QueryResult, result) {
	t.Helper()
	r := arbor(t, "", append([]string{"--root", dir, "--fixed-time", "2026-03-01T00:00:00Z", "--json", "query", llmQuestion}, args...)...)
	if r.code != 0 {
		t.Fatalf("query: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res api.QueryResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return res, r
}

func body(t *testing.T, req llmtest.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := req.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLLMTier3(t *testing.T) {
	for _, provider := range []string{"openai-compatible", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dir := llmRoot(t)
			srv := model(t, provider, "tier3.json")
			res, _ := askJSON(t, dir)
			if res.Tier != 3 || res.TierName != "llm" || fmt.Sprint(res.Sources) != "[engineering/payments/card_retries.md engineering/billing/invoice_retry_policy.md]" {
				t.Fatalf("tier %d %s, sources %v", res.Tier, res.TierName, res.Sources)
			}
			if res.LLM == nil || len(res.LLM.Steps) != 1 || res.LLM.InputTokens != 850 || res.LLM.Steps[0].Model != "scripted-large" {
				t.Fatalf("trace %+v", res.LLM)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			b := body(t, reqs[0])
			if b["max_tokens"] != 1024.0 || b["temperature"] != 0.3 || b["tools"] != nil {
				t.Errorf("tier-3 request: %v", b)
			}
			if provider == "anthropic" && (reqs[0].Header.Get("X-Api-Key") != "sk-e2e" || b["system"] == nil) {
				t.Errorf("anthropic request: headers %v, system %v", reqs[0].Header, b["system"])
			}
		})
	}
}

func TestLLMTier3HumanOutput(t *testing.T) {
	dir := llmRoot(t)
	model(t, "openai-compatible", "tier3.json")
	out := must(t, "", "--root", dir, "query", llmQuestion)
	for _, want := range []string{"Summary: Failed card payments", "tier 3 (llm)", "tier 3: grounded answer", "search results given to the model:",
		"model: 1 call to openai-compatible scripted-large · 850 tokens in, 64 out", "1. tier3", "850 in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestLLMAnswerCached: the same question again in one session is the
// exact cache's, with no model call.
func TestLLMAnswerCached(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "tier3.json")
	out := must(t, llmQuestion+"\n"+llmQuestion+"\n", "--root", dir, "query", "-")
	t3, t0 := strings.Index(out, "tier 3 (llm)"), strings.Index(out, "tier 0 (exact-cache)")
	if t3 < 0 || t0 < t3 || len(srv.Requests()) != 1 {
		t.Fatalf("%d requests; output:\n%s", len(srv.Requests()), out)
	}
	if strings.Count(out, "search results given to the model:") != 2 {
		t.Errorf("the cached answer's results are not titled as the model's:\n%s", out)
	}
}

func TestLLMTier4ToolLoop(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "tier4.json")
	res, _ := askJSON(t, dir)
	if res.Tier != 4 || res.TierName != "agentic" || fmt.Sprint(res.Sources) != "[operations/oncall/escalation.md]" {
		t.Fatalf("tier %d %s, sources %v, reason %s", res.Tier, res.TierName, res.Sources, res.Reason)
	}
	var tools []string
	for _, s := range res.LLM.Steps {
		tools = append(tools, s.Purpose+":"+strings.Join(s.ToolCalls, "+"))
	}
	if got := strings.Join(tools, " "); got != "tier3: tier4:search_knowledge tier4:read_entry+follow_relations tier4:search_knowledge tier4:" {
		t.Errorf("steps %s", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	var second struct {
		MaxTokens int     `json:"max_tokens"`
		Temp      float64 `json:"temperature"`
		Tools     []struct{ Function struct{ Name string } }
	}
	reqs[1].Decode(&second)
	if second.MaxTokens != 2048 || second.Temp != 0.5 || len(second.Tools) != 4 {
		t.Errorf("tier-4 request: %+v", second)
	}
	var fourth struct {
		Messages []struct {
			Role, Content string
			ToolCallID    string `json:"tool_call_id"`
		}
	}
	reqs[4].Decode(&fourth)
	last := fourth.Messages[len(fourth.Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "d" || !strings.HasPrefix(last.Content, "error: arguments are not valid") {
		t.Errorf("the malformed call's answer: %+v", last)
	}
}

func TestLLMGarbage(t *testing.T) {
	t.Run("answer", func(t *testing.T) {
		dir := llmRoot(t)
		model(t, "openai-compatible", "tier3-garbage.json")
		res, _ := askJSON(t, dir)
		if res.Tier != 2 || !res.NeedsLLM || !strings.Contains(res.Reason, "tier 3: the model's answer was not used") || strings.Contains(res.Answer, "lorem") {
			t.Fatalf("tier %d, reason %q, answer %q", res.Tier, res.Reason, res.Answer)
		}
	})
	t.Run("body", func(t *testing.T) {
		dir := llmRoot(t)
		srv := model(t, "openai-compatible", "body-garbage.json")
		res, _ := askJSON(t, dir)
		if res.Tier != 2 || !strings.Contains(res.Reason, "tier 3: the model call failed (invalid: openai-compatible: the answer could not be decoded") {
			t.Fatalf("tier %d, reason %q", res.Tier, res.Reason)
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("%d requests: a garbage body is not retried", len(srv.Requests()))
		}
	})
}

func TestLLMServerErrorThenSuccess(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "http500.json")
	res, r := askJSON(t, dir)
	if res.Tier != 3 || len(srv.Requests()) != 2 || len(res.LLM.Steps) != 1 {
		t.Fatalf("tier %d after %d requests, %d steps", res.Tier, len(srv.Requests()), len(res.LLM.Steps))
	}
	if !strings.Contains(r.stderr, "arbor: openai-compatible: attempt 1: HTTP 500: upstream exploded; retrying in") || !strings.Contains(r.stderr, "(backoff)") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestLLMRateLimitHonoursRetryAfter(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "ratelimit.json")
	res, r := askJSON(t, dir)
	if res.Tier != 3 || len(srv.Requests()) != 2 {
		t.Fatalf("tier %d after %d requests", res.Tier, len(srv.Requests()))
	}
	if !strings.Contains(r.stderr, "attempt 1: rate limited (HTTP 429): scripted HTTP 429; retrying in 50ms (as the server asked)") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestLLMAuthErrorReachesTheEngine(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "tier3.json")
	srv.RequireKey("sk-other")
	res, r := askJSON(t, dir)
	if res.Tier != 2 || !strings.Contains(res.Reason, "auth: openai-compatible: the API key was refused (HTTP 401, the key from ARBOR_LLM_API_KEY)") {
		t.Fatalf("tier %d, reason %q", res.Tier, res.Reason)
	}
	if strings.Contains(r.stdout+r.stderr, "sk-e2e") || len(srv.Requests()) != 1 {
		t.Errorf("the key printed, or the refusal was retried (%d requests)", len(srv.Requests()))
	}
}

func TestLLMBudgetExhaustion(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "budget.json")
	res, _ := askJSON(t, dir, "--budget", "5000")
	if res.Tier != 4 || !res.Incomplete || !strings.Contains(res.Reason, "the token budget is spent (6310 of 5000 tokens used)") {
		t.Fatalf("tier %d, incomplete %v, reason %q", res.Tier, res.Incomplete, res.Reason)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || body(t, reqs[3])["max_tokens"] != 290.0 {
		t.Fatalf("%d requests; the last must ask for the 290 tokens left", len(reqs))
	}
}

func TestLLMCurateFrom(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "curate.json")
	out := must(t, "", "--root", dir, "--fixed-time", "2026-03-01T00:00:00Z", "curate", "--from", filepath.Join(llmFixture, "notes.txt"))
	for _, want := range []string{
		"read ../../../tests/llm/notes.txt:",
		"turn 1 ✓ ADD    engineering/releases/deploy_freeze.md — added",
		"turn 1 ✗ UPDATE engineering/releases/hotfix_approval.md",
		"turn 2 ✓ ADD    engineering/releases/hotfix_approval.md — added",
		"2 added, 0 updated, 0 merged, 0 deleted, 0 moved, 0 failed",
		"model: Stored the deploy freeze",
		"3 operations proposed, 1 failed or refused in the loop, 2 written",
		"model: 3 calls to openai-compatible scripted-large",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "engineering/releases/hotfix_approval.md"))
	if err != nil || !strings.Contains(string(md), "release manager approves every hotfix") {
		t.Fatalf("entry: %v\n%s", err, md)
	}
	var feedback struct {
		Messages []struct{ Role, Content string }
	}
	srv.Requests()[1].Decode(&feedback)
	if last := feedback.Messages[len(feedback.Messages)-1]; last.Role != "tool" || !strings.Contains(last.Content, `"status":"failed"`) {
		t.Errorf("the second turn did not see the failure: %+v", last)
	}
	if hit := must(t, "", "--root", dir, "search", "hotfix", "approval", "--limit", "1"); !strings.Contains(hit, "engineering/releases/hotfix_approval.md") {
		t.Errorf("search: %s", hit)
	}
	// Bad material is refused before any model call.
	notes := filepath.Join(llmFixture, "notes.txt")
	garbled := filepath.Join(t.TempDir(), "garbled.txt")
	writeFile(t, garbled, "caf\x81")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{notes, notes, notes, notes, notes, notes}, "6 files, at most 5"},
		{[]string{garbled}, "garbled.txt: bad input: neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 3 (line 1)"},
		{[]string{filepath.Join(dir, "missing.txt")}, "no such file"},
		{nil, "name the files to curate from"},
	} {
		r := arbor(t, "", append([]string{"--root", dir, "curate", "--from"}, tc.args...)...)
		if r.code == exitOK || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("curate --from %v: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests: refused material reached the model", n)
	}
}

// TestLLMCancel: the caller giving up mid-curation (Ctrl-C in the CLI)
// cancels the continuation; the staged ADD never reaches the tree.
func TestLLMCancel(t *testing.T) {
	dir := llmRoot(t)
	srv := model(t, "openai-compatible", "cancel.json")
	before := treeSnapshot(t, dir)
	eng, client := drivenEngine(t, dir)
	ctx := context.Background()
	cctx := cancelAfter(ctx, srv, 2)
	notes, _ := os.ReadFile(filepath.Join(llmFixture, "notes.txt"))
	_, err := eng.CurateFrom(cctx, api.CurateFromParams{Files: []api.SourceFile{{Name: "notes.txt", Content: string(notes)}}}, client)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if _, err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if after := treeSnapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the tree changed:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := eng.Read(ctx, api.ReadParams{Path: "engineering/releases/deploy_freeze.md"}); err == nil {
		t.Fatal("the staged entry is readable")
	}
	// The engine forgot the continuation: nothing is left waiting.
	if _, err := eng.CallMethod(ctx, "resume", api.ResumeParams{Continuation: "c_00000000000000000000000000000000", Response: &api.LLMResponse{Content: "x"}}); err == nil {
		t.Fatal("resume of an unknown continuation succeeded")
	}
}

// drivenEngine is an engine open on dir and a client of the model dir's
// configuration names, for the tests that drive model calls themselves.
func drivenEngine(t *testing.T, dir string) (*runtime.Engine, *hostllm.Client) {
	t.Helper()
	cfg, err := hostllm.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	client, err := hostllm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := runtime.New(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(ctx) })
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	return eng, client
}

// cancelAfter returns a context of ctx cancelled once srv has received n
// requests.
func cancelAfter(ctx context.Context, srv *llmtest.Server, n int) context.Context {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		for len(srv.Requests()) < n {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	return cctx
}

// treeSnapshot lists the markdown files of a root with their contents.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".arbor" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func TestLLMNotConfigured(t *testing.T) {
	dir := llmRoot(t)
	noLLMConfig(t)
	out := must(t, "", "--root", dir, "query", llmQuestion)
	if !strings.Contains(out, "tier 2 (results)") || !strings.Contains(out, "No LLM provider is configured, so tiers 3–4 were not tried") {
		t.Errorf("output:\n%s", out)
	}
	r := arbor(t, "", "--root", dir, "curate", "--from", filepath.Join(llmFixture, "notes.txt"))
	if r.code != exitError || !strings.Contains(r.stderr, "curate --from needs an LLM provider") || !strings.Contains(r.stderr, "docs/llm.md") {
		t.Errorf("curate --from without a provider: exit %d\n%s", r.code, r.stderr)
	}
	// --no-llm: tiers 0–2 even when one is configured.
	srv := model(t, "openai-compatible", "tier3.json")
	if res, _ := askJSON(t, dir, "--no-llm"); res.Tier != 2 || len(srv.Requests()) != 0 {
		t.Errorf("--no-llm: tier %d, %d requests", res.Tier, len(srv.Requests()))
	}
}

func TestLLMBadConfiguration(t *testing.T) {
	dir := llmRoot(t)
	noLLMConfig(t)
	t.Setenv(hostllm.EnvProvider, "gpt")
	r := arbor(t, "", "--root", dir, "query", llmQuestion)
	if r.code != exitError || !strings.Contains(r.stderr, `LLM configuration: unknown LLM provider "gpt"`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if r := arbor(t, "", "--root", dir, "query", llmQuestion, "--no-llm"); r.code != exitOK {
		t.Errorf("--no-llm must not read the configuration: exit %d\n%s", r.code, r.stderr)
	}
	// The root's own config file is read, and a misspelt key is named.
	t.Setenv(hostllm.EnvProvider, "")
	writeFile(t, hostllm.RootConfigPath(dir), `{"llm":{"provider":"ollama","modle":"llama3"}}`)
	r = arbor(t, "", "--root", dir, "query", llmQuestion)
	if r.code != exitError || !strings.Contains(r.stderr, `unknown field "modle"`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}
