package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/prompt"
)

// llmTree is a small tree where "how are failed payments retried" has no
// direct answer: three entries share its words.
var llmTree = map[string]string{
	"engineering/billing/invoice_retry_policy.md": billingEntry,
	"engineering/billing/dunning_emails.md":       linkingEntry,
	"engineering/payments/card_retries.md": `---
title: Card Payment Retries
summary: failed card payments are retried after 1 hour and after 1 day
related: [engineering/billing/invoice_retry_policy.md]
---

## Narrative
Failed card payments are retried after one hour, then after one day; the card processor's decline code decides whether a retry is allowed.
`,
	"operations/oncall/escalation.md": `---
title: On-call Escalation
summary: the billing lead is paged after the third failed invoice retry
---

## Narrative
When an invoice fails its third retry the on-call engineer pages the billing lead.
`,
}

// model answers one pending request: a response, or an error for resume.
type model func(step int, req api.LLMRequest) (*api.LLMResponse, *api.LLMError)

// script replies with the given functions in order, failing the test when
// the engine asks for more steps than scripted.
func script(t *testing.T, steps ...model) model {
	return func(step int, req api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
		t.Helper()
		if step > len(steps) {
			t.Fatalf("step %d: the engine asked more than the %d scripted model calls; last message: %+v", step, len(steps), req.Messages[len(req.Messages)-1])
		}
		return steps[step-1](step, req)
	}
}

func reply(content string, calls ...api.ToolCall) model {
	return func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
		return &api.LLMResponse{Content: content, ToolCalls: calls, Usage: api.Usage{InputTokens: 100, OutputTokens: 20}, LatencyMs: 5}, nil
	}
}

func call1(id, name, args string) api.ToolCall {
	return api.ToolCall{ID: id, Name: name, Arguments: args}
}

// pendingOf decodes a pending result, or returns false for a final one.
func pendingOf(t *testing.T, res map[string]any) (api.Pending, bool) {
	t.Helper()
	if res["status"] != "pending" {
		return api.Pending{}, false
	}
	b, _ := json.Marshal(res)
	var p api.Pending
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Continuation, "c_") || len(p.Continuation) != 34 {
		t.Fatalf("continuation %q: want c_ and 32 hex digits", p.Continuation)
	}
	return p, true
}

// mustPend calls method with params and returns the pending result it must
// give.
func mustPend(t *testing.T, s *Session, method string, params any) api.Pending {
	t.Helper()
	res, errObj := call(t, s, method, params)
	if errObj != nil {
		t.Fatal(errObj)
	}
	p, ok := pendingOf(t, res)
	if !ok {
		t.Fatalf("%s: not pending: %v", method, res)
	}
	return p
}

// drive runs method to its final result through the model, returning the
// result and every request the engine made.
func drive(t *testing.T, s *Session, method string, params any, m model) (map[string]any, []api.LLMRequest) {
	t.Helper()
	res, errObj := call(t, s, method, params)
	var reqs []api.LLMRequest
	for {
		if errObj != nil {
			t.Fatalf("%s: %v", method, errObj)
		}
		p, ok := pendingOf(t, res)
		if !ok {
			return res, reqs
		}
		if p.Step != len(reqs)+1 {
			t.Fatalf("pending step %d, want %d", p.Step, len(reqs)+1)
		}
		reqs = append(reqs, p.LLM)
		resp, fail := m(p.Step, p.LLM)
		res, errObj = call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: resp, Error: fail})
	}
}

func llmSession(t *testing.T, open map[string]any) (*Session, *host.MemFS) {
	t.Helper()
	s, fs := newSession(t, llmTree)
	params := map[string]any{"fixedTime": "2026-03-01T00:00:00Z"}
	for k, v := range open {
		params[k] = v
	}
	if _, errObj := call(t, s, "open", params); errObj != nil {
		t.Fatalf("open: %v", errObj)
	}
	return s, fs
}

const retryQuestion = "failed retry escalation"

func TestQueryWithoutLLMUnchanged(t *testing.T) {
	s, _ := llmSession(t, nil)
	plain, _ := call(t, s, "query", map[string]any{"query": retryQuestion})
	withFlag, _ := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": false})
	if plain["needsLLM"] != true || plain["tier"].(float64) != 2 {
		t.Fatalf("want a tier-2 list needing a model, got %v", plain)
	}
	if _, ok := plain["llm"]; ok {
		t.Fatalf("a query without llm carries an llm trace: %v", plain)
	}
	if withFlag["needsLLM"] != true || withFlag["answer"] != plain["answer"] {
		t.Fatalf("llm:false changed the answer: %v vs %v", withFlag, plain)
	}
}

func TestTier3GroundedAnswer(t *testing.T) {
	s, _ := llmSession(t, nil)
	answer := `## Summary
Failed card payments are retried after an hour and a day; invoices three times, 24 hours apart.

## Details
Cards: after one hour, then one day (engineering/payments/card_retries.md). Invoices: three times at 24 hour intervals (engineering/billing/invoice_retry_policy.md).

## Sources
- engineering/payments/card_retries.md
- engineering/billing/invoice_retry_policy.md
- engineering/billing/made_up.md

## Gaps
none`
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t, reply(answer)))
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1 (tier 3)", len(reqs))
	}
	r := reqs[0]
	if r.MaxTokens != 1024 || r.Temperature != 0.3 || len(r.Tools) != 0 || len(r.Messages) != 2 {
		t.Fatalf("tier-3 request: max_tokens %d, temperature %v, %d tools, %d messages", r.MaxTokens, r.Temperature, len(r.Tools), len(r.Messages))
	}
	if r.Messages[0].Role != api.RoleSystem || !strings.Contains(r.Messages[0].Content, prompt.NotCovered) {
		t.Fatalf("system prompt: %q", r.Messages[0].Content)
	}
	if !strings.Contains(r.Messages[1].Content, "=== entry: engineering/payments/card_retries.md ===") || !strings.Contains(r.Messages[1].Content, retryQuestion) {
		t.Fatalf("user message lacks the question or the prefetched entry:\n%s", r.Messages[1].Content)
	}
	if res["tier"].(float64) != 3 || res["tierName"] != "llm" || res["needsLLM"] != false {
		t.Fatalf("want tier 3 llm, got %v", res)
	}
	src := fmt.Sprint(res["sources"])
	if src != "[engineering/payments/card_retries.md engineering/billing/invoice_retry_policy.md]" {
		t.Fatalf("sources %s: the unknown path must be dropped, the known kept in order", src)
	}
	if !strings.Contains(res["reason"].(string), "dropped sources the model was not shown: engineering/billing/made_up.md") {
		t.Fatalf("reason %q does not say the invented source was dropped", res["reason"])
	}
	if !strings.HasPrefix(res["answer"].(string), "Summary: Failed card payments") || strings.Contains(res["answer"].(string), "made_up") {
		t.Fatalf("answer %q", res["answer"])
	}
	trace := res["llm"].(map[string]any)
	steps := trace["steps"].([]any)
	if len(steps) != 1 || trace["inputTokens"].(float64) != 100 || trace["outputTokens"].(float64) != 20 {
		t.Fatalf("trace %v", trace)
	}
	if st := steps[0].(map[string]any); st["purpose"] != "tier3" || st["latencyMs"].(float64) != 5 {
		t.Fatalf("step %v", st)
	}
	// The answer's sources count as accessed, as a direct answer's entry does.
	read, _ := call(t, s, "query", map[string]any{"query": "card payment retries decline code processor"})
	for _, h := range read["results"].([]any) {
		h := h.(map[string]any)
		if h["path"] == "engineering/payments/card_retries.md" && h["lifecycle"].(map[string]any)["importance"].(float64) < 53 {
			t.Fatalf("a tier-3 source was not counted as accessed: %v", h["lifecycle"])
		}
	}
}

func TestTier3UnusableAnswers(t *testing.T) {
	cases := []struct{ name, content, reason string }{
		{"garbage", "lorem ipsum dolor sit amet", "does not follow the format"},
		{"invalid json", `{"summary": "retried", "sources": [`, "does not follow the format"},
		{"invented sources only", "## Summary\nRetried daily.\n## Sources\n- finance/retries/daily.md\n## Gaps\nnone", "cites only entries that were not given: finance/retries/daily.md"},
		{"no summary", "## Sources\n- engineering/payments/card_retries.md", "has no Summary"},
		{"empty", "  ", "the answer is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := llmSession(t, nil)
			res, _ := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t, reply(tc.content)))
			if res["tier"].(float64) != 2 || res["tierName"] != "results" || res["needsLLM"] != true {
				t.Fatalf("an unusable answer must leave the tier-2 results, got tier %v %v", res["tier"], res["tierName"])
			}
			if r := res["reason"].(string); !strings.Contains(r, "tier 3: the model's answer was not used: ") || !strings.Contains(r, tc.reason) {
				t.Fatalf("reason %q, want it to say %q", res["reason"], tc.reason)
			}
			if strings.Contains(res["answer"].(string), tc.content) && strings.TrimSpace(tc.content) != "" {
				t.Fatalf("the unusable answer was passed on: %q", res["answer"])
			}
			if _, ok := res["sources"]; ok {
				t.Fatalf("a fallback claims sources: %v", res["sources"])
			}
		})
	}
}

func TestTier4ToolLoop(t *testing.T) {
	s, _ := llmSession(t, nil)
	final := "## Summary\nAfter the third failed invoice retry the billing lead is paged.\n## Details\nSee operations/oncall/escalation.md.\n## Sources\n- operations/oncall/escalation.md\n## Gaps\nnone"
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t,
		reply("NEEDS MORE: who is told when retries run out"),
		reply("", call1("a", "search_knowledge", `{"query":"billing lead paged"}`)),
		reply("", call1("b", "read_entry", `{"path":"operations/oncall/escalation.md"}`),
			call1("c", "follow_relations", `{"path":"engineering/payments/card_retries.md","direction":"forward"}`)),
		reply("", call1("", "list_tree", `{"path":"operations","depth":2}`)),
		reply(final),
	))
	if len(reqs) != 5 {
		t.Fatalf("%d model calls, want 5", len(reqs))
	}
	r := reqs[1]
	if r.MaxTokens != 2048 || r.Temperature != 0.5 || len(r.Tools) != 4 {
		t.Fatalf("tier-4 request: max_tokens %d, temperature %v, %d tools", r.MaxTokens, r.Temperature, len(r.Tools))
	}
	for _, tool := range r.Tools {
		var schema map[string]any
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Fatalf("tool %s: schema %s: %v", tool.Name, tool.Parameters, err)
		}
	}
	if !strings.Contains(r.Messages[1].Content, "who is told when retries run out") || !strings.Contains(r.Messages[0].Content, "engineering/billing/") {
		t.Fatalf("tier 4 must start from tier 3's note and the tree's folders:\n%s\n%s", r.Messages[0].Content, r.Messages[1].Content)
	}
	// Step 3 sees the search result, step 4 the entry and the relations.
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if last.Role != api.RoleTool || last.ToolCallID != "a" || !strings.Contains(last.Content, "operations/oncall/escalation.md") {
		t.Fatalf("search result message: %+v", last)
	}
	msgs := reqs[3].Messages
	read, rel := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if read.ToolCallID != "b" || !strings.Contains(read.Content, "pages the billing lead") {
		t.Fatalf("read_entry result: %+v", read)
	}
	if rel.ToolCallID != "c" || !strings.Contains(rel.Content, `"path":"engineering/billing/invoice_retry_policy.md","title":"Invoice Retry Policy"`) {
		t.Fatalf("follow_relations result: %+v", rel)
	}
	lt := reqs[4].Messages[len(reqs[4].Messages)-1]
	if lt.ToolCallID == "" || !strings.Contains(lt.Content, "operations/oncall/escalation.md — On-call Escalation") {
		t.Fatalf("list_tree result (a call without id gets one): %+v", lt)
	}
	if res["tier"].(float64) != 4 || res["tierName"] != "agentic" || fmt.Sprint(res["sources"]) != "[operations/oncall/escalation.md]" {
		t.Fatalf("want a tier-4 answer citing the escalation entry, got %v", res)
	}
	if !strings.Contains(res["reason"].(string), "tier 3: needs more entries") {
		t.Fatalf("reason %q does not say why tier 3 escalated", res["reason"])
	}
	if n := len(res["llm"].(map[string]any)["steps"].([]any)); n != 5 {
		t.Fatalf("%d steps in the trace, want 5", n)
	}
}

// A filtered question's agentic loop works within the filters, as tiers 2
// and 3 do: its searches walk only what they keep, and an entry outside
// them is neither read, listed, followed nor shown in the overview.
func TestTier4WithinFilters(t *testing.T) {
	s, _ := llmSession(t, nil)
	final := "## Summary\nCards are retried after an hour and a day.\n## Details\nSee engineering/payments/card_retries.md.\n## Sources\n- engineering/payments/card_retries.md\n## Gaps\nnone"
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true, "domain": "engineering"}, script(t,
		reply(prompt.NotCovered),
		reply("", call1("a", "search_knowledge", `{"query":"billing lead paged"}`),
			call1("b", "read_entry", `{"path":"operations/oncall/escalation.md"}`),
			call1("c", "follow_relations", `{"path":"operations/oncall/escalation.md"}`),
			call1("d", "list_tree", `{"path":"","depth":3}`),
			call1("e", "read_entry", `{"path":"engineering/payments/card_retries.md"}`)),
		reply(final),
	))
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if sys := reqs[1].Messages[0].Content; strings.Contains(sys, "operations") || !strings.Contains(sys, "engineering/billing/") {
		t.Errorf("the overview of a question filtered to engineering:\n%s", sys)
	}
	msgs := reqs[2].Messages
	got := map[string]string{}
	for _, m := range msgs[len(msgs)-5:] {
		got[m.ToolCallID] = m.Content
	}
	if strings.Contains(got["a"], "operations/") || !strings.Contains(got["a"], "engineering/") {
		t.Errorf("search within the filters: %s", got["a"])
	}
	for _, id := range []string{"b", "c"} {
		if !strings.Contains(got[id], "error: operations/oncall/escalation.md is outside this question's filters") {
			t.Errorf("tool call %s on an entry outside the filters: %s", id, got[id])
		}
	}
	if strings.Contains(got["d"], "operations") || !strings.Contains(got["d"], "engineering/payments/card_retries.md") {
		t.Errorf("list_tree within the filters:\n%s", got["d"])
	}
	if !strings.Contains(got["e"], "retried after one hour") || !strings.Contains(got["e"], "links to: engineering/billing/invoice_retry_policy.md") {
		t.Errorf("read_entry within the filters: %s", got["e"])
	}
	if res["tier"].(float64) != 4 || fmt.Sprint(res["sources"]) != "[engineering/payments/card_retries.md]" {
		t.Fatalf("want a tier-4 answer citing the card entry, got %v", res)
	}
}

func TestTier4MalformedToolCalls(t *testing.T) {
	s, _ := llmSession(t, nil)
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t,
		reply(prompt.NotCovered),
		reply("", call1("1", "search_knowledge", `{"query": "retry"`),
			call1("2", "delete_everything", `{}`),
			call1("3", "search_knowledge", `{"query":"retry","limit":"ten"}`),
			call1("4", "read_entry", `{"path":"../../etc/passwd"}`),
			call1("5", "read_entry", `{"path":"engineering/nowhere.md"}`),
			call1("6", "follow_relations", `{"path":"engineering/payments/card_retries.md","direction":"sideways"}`),
			call1("7", "read_entry", `{"path":"engineering/payments/card_retries.md","mode":"raw"}`),
			call1("8", "search_knowledge", `{"query":"`+strings.Repeat("retry ", api.MaxQueryBytes/6+1)+`"}`)),
		reply(prompt.NotCovered),
	))
	msgs := reqs[2].Messages
	tools := msgs[len(msgs)-8:]
	want := []string{"arguments are not valid", `unknown tool "delete_everything"`, "arguments are not valid", "not allowed", "no entry engineering/nowhere.md", `direction "sideways"`, `unknown field "mode"`, "query is 4098 bytes, over the 4096-byte limit"}
	for i, m := range tools {
		if m.Role != api.RoleTool || !strings.HasPrefix(m.Content, "error: ") || !strings.Contains(m.Content, want[i]) {
			t.Errorf("tool answer %d: %q, want an error containing %q", i+1, m.Content, want[i])
		}
	}
	if res["tier"].(float64) != 4 || res["answer"] != "The stored knowledge does not answer this question." {
		t.Fatalf("want tier 4 not covered, got %v", res)
	}
}

func TestTier4FormatReminderThenAnswer(t *testing.T) {
	s, _ := llmSession(t, nil)
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true, "tokenBudget": 100000}, script(t,
		reply(prompt.NotCovered),
		reply("", call1("r", "read_entry", `{"path":"engineering/payments/card_retries"}`)),
		reply("They are retried a lot."),
		reply("## Summary\nAfter one hour, then one day.\n## Sources\n- engineering/payments/card_retries.md"),
	))
	if got := reqs[3].Messages[len(reqs[3].Messages)-1]; got.Role != api.RoleUser || !strings.Contains(got.Content, "does not follow the format") {
		t.Fatalf("the unusable answer was not sent back with the reason: %+v", got)
	}
	if res["tier"].(float64) != 4 || fmt.Sprint(res["sources"]) != "[engineering/payments/card_retries.md]" {
		t.Fatalf("got %v", res)
	}
}

func TestLLMErrorResume(t *testing.T) {
	t.Run("tier 3", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, _ := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t,
			func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
				return nil, &api.LLMError{Code: api.LLMTimeout, Message: "no answer in 60s"}
			}))
		if res["tierName"] != "results" || !strings.Contains(res["reason"].(string), "tier 3: the model call failed (timeout: no answer in 60s)") {
			t.Fatalf("got %v", res)
		}
		steps := res["llm"].(map[string]any)["steps"].([]any)
		if steps[0].(map[string]any)["error"] != "timeout: no answer in 60s" {
			t.Fatalf("the failed step is not in the trace: %v", steps)
		}
	})
	t.Run("tier 4 after a read", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, _ := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t,
			reply(prompt.NotCovered),
			reply("", call1("r", "read_entry", `{"path":"operations/oncall/escalation.md"}`)),
			func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
				return nil, &api.LLMError{Code: api.LLMRateLimit, Message: "429 after 3 retries"}
			}))
		if res["tier"].(float64) != 4 || res["incomplete"] != true || fmt.Sprint(res["sources"]) != "[operations/oncall/escalation.md]" {
			t.Fatalf("want the entries read as the best grounded answer, got %v", res)
		}
		if !strings.Contains(res["reason"].(string), "rate_limit: 429 after 3 retries") || !strings.Contains(res["answer"].(string), "On-call Escalation") {
			t.Fatalf("got %v", res)
		}
	})
	t.Run("bad resume params", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, _ := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": true})
		p, _ := pendingOf(t, res)
		for _, params := range []any{
			map[string]any{"continuation": p.Continuation},
			map[string]any{"continuation": p.Continuation, "response": map[string]any{"content": "x"}, "error": map[string]any{"code": "http"}},
			map[string]any{"continuation": p.Continuation, "error": map[string]any{"message": "no code"}},
		} {
			if _, errObj := call(t, s, "resume", params); errObj == nil || errObj["code"] != api.CodeInvalidParams {
				t.Fatalf("resume %v: got %v, want invalid_params", params, errObj)
			}
		}
		// A bad resume does not consume the continuation.
		if res, errObj := call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: prompt.NotCovered}}); errObj != nil || res["status"] != "pending" {
			t.Fatalf("the continuation was lost: %v %v", res, errObj)
		}
	})
}

func TestBudgetAndIterationExhaustion(t *testing.T) {
	searching := func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
		return &api.LLMResponse{ToolCalls: []api.ToolCall{{ID: "s", Name: "read_entry", Arguments: `{"path":"engineering/billing/dunning_emails.md"}`}},
			Usage: api.Usage{InputTokens: 1500, OutputTokens: 100}}, nil
	}
	t.Run("budget", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true, "tokenBudget": 5000}, func(step int, req api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
			if step == 1 {
				return &api.LLMResponse{Content: prompt.NotCovered, Usage: api.Usage{InputTokens: 1500, OutputTokens: 10}}, nil
			}
			return searching(step, req)
		})
		// 1510 + 1600 + 1600 = 4710: 290 left, so a 4th call may ask for 290 tokens, a 5th is not made.
		if len(reqs) != 4 || reqs[3].MaxTokens != 290 {
			t.Fatalf("%d calls (last max_tokens %d), want 4 with the last capped at the 290 tokens left", len(reqs), reqs[len(reqs)-1].MaxTokens)
		}
		if res["incomplete"] != true || !strings.Contains(res["reason"].(string), "the token budget is spent (6310 of 5000 tokens used)") {
			t.Fatalf("got %v", res)
		}
		if fmt.Sprint(res["sources"]) != "[engineering/billing/dunning_emails.md]" {
			t.Fatalf("sources %v", res["sources"])
		}
	})
	t.Run("iterations", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true, "maxIterations": 3}, func(step int, req api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
			if step == 1 {
				return &api.LLMResponse{Content: prompt.NotCovered}, nil
			}
			return searching(step, req)
		})
		if len(reqs) != 3 || !strings.Contains(res["reason"].(string), "the iteration limit (3 model calls) was reached") {
			t.Fatalf("%d calls, reason %q", len(reqs), res["reason"])
		}
		if res["llm"].(map[string]any)["estimated"] != true {
			t.Fatalf("a step without usage must be estimated: %v", res["llm"])
		}
	})
	t.Run("bad params", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		for _, p := range []map[string]any{{"tokenBudget": -1}, {"maxIterations": 51}} {
			p["query"], p["llm"] = retryQuestion, true
			if _, errObj := call(t, s, "query", p); errObj == nil || errObj["code"] != api.CodeInvalidParams {
				t.Fatalf("%v: got %v", p, errObj)
			}
		}
	})
}

// movingClock is a clock a test advances.
type movingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movingClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *movingClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestContinuationExpiryAndIDs(t *testing.T) {
	s, _ := newSession(t, llmTree)
	clock := &movingClock{now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	s.clock = clock
	if _, errObj := call(t, s, "open", map[string]any{"llm": map[string]any{"continuationSeconds": 60, "maxContinuations": 2}}); errObj != nil {
		t.Fatal(errObj)
	}
	start := func() api.Pending {
		return mustPend(t, s, "query", map[string]any{"query": retryQuestion, "llm": true})
	}
	a, b := start(), start()
	if a.Continuation == b.Continuation {
		t.Fatal("two continuations share an id")
	}
	if _, errObj := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}); errObj == nil || errObj["code"] != api.CodeTooManyPending {
		t.Fatalf("a third waiting call: got %v, want too_many_pending", errObj)
	}
	clock.add(59 * time.Second)
	res, errObj := call(t, s, "resume", api.ResumeParams{Continuation: a.Continuation, Response: &api.LLMResponse{Content: prompt.NotCovered}})
	if errObj != nil {
		t.Fatalf("resume within the TTL: %v", errObj)
	}
	next, _ := pendingOf(t, res)
	if next.Continuation == a.Continuation || next.Step != 2 {
		t.Fatalf("the next step must get a new id and step 2: %+v", next)
	}
	// The consumed id cannot run its step again.
	if _, errObj := call(t, s, "resume", api.ResumeParams{Continuation: a.Continuation, Response: &api.LLMResponse{Content: "x"}}); errObj == nil || errObj["code"] != api.CodeUnknownContinuation {
		t.Fatalf("resume of a consumed id: got %v", errObj)
	}
	clock.add(2 * time.Second) // b is now 61 s old, next 2 s
	if _, errObj := call(t, s, "resume", api.ResumeParams{Continuation: b.Continuation, Response: &api.LLMResponse{Content: "x"}}); errObj == nil || errObj["code"] != api.CodeExpired {
		t.Fatalf("resume after the TTL: got %v, want %s", errObj, api.CodeExpired)
	}
	if _, errObj := call(t, s, "cancel", api.CancelParams{Continuation: "c_00000000000000000000000000000000"}); errObj == nil || errObj["code"] != api.CodeUnknownContinuation {
		t.Fatalf("cancel of an unknown id: got %v", errObj)
	}
	res, errObj = call(t, s, "cancel", api.CancelParams{Continuation: next.Continuation})
	if errObj != nil || res["cancelled"] != true || res["steps"].(float64) != 2 {
		t.Fatalf("cancel: %v %v", res, errObj)
	}
	for _, bad := range []map[string]any{{"continuationSeconds": -1}, {"maxIterations": 99}, {"tier3MinScore": 1.5}} {
		if _, errObj := call(t, s, "open", map[string]any{"llm": bad}); errObj == nil || errObj["code"] != api.CodeInvalidParams {
			t.Fatalf("open llm %v: got %v", bad, errObj)
		}
	}
}

func TestOtherCallsServedWhileWaiting(t *testing.T) {
	s, _ := llmSession(t, nil)
	res, _ := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": true})
	p, _ := pendingOf(t, res)
	if r, errObj := call(t, s, "search", map[string]any{"query": "dunning"}); errObj != nil || r["total"].(float64) < 1 {
		t.Fatalf("search while a query waits: %v %v", r, errObj)
	}
	if _, errObj := call(t, s, "read", map[string]any{"path": "engineering/billing/dunning_emails.md"}); errObj != nil {
		t.Fatal(errObj)
	}
	if r, _ := call(t, s, "curate", map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "engineering/payments", "title": "Refunds", "content": map[string]any{"narrative": "Refunds take five days."}, "reason": "test"}}}); r["summary"].(map[string]any)["added"].(float64) != 1 {
		t.Fatalf("curate while a query waits: %v", r)
	}
	if r, _ := call(t, s, "query", map[string]any{"query": "refunds"}); r["tierName"] != "direct" {
		t.Fatalf("a plain query while another waits: %v", r)
	}
	res, errObj := call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: "## Summary\nHourly then daily.\n## Sources\n- engineering/payments/card_retries.md"}})
	if errObj != nil || res["tier"].(float64) != 3 {
		t.Fatalf("resume after other calls: %v %v", res, errObj)
	}
}

func TestTier4DirectlyBelowTier3MinScore(t *testing.T) {
	s, _ := llmSession(t, map[string]any{"llm": map[string]any{"tier3MinScore": 0.95}})
	res, reqs := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t, reply(prompt.NotCovered)))
	if len(reqs[0].Tools) != 4 || reqs[0].MaxTokens != 2048 {
		t.Fatalf("the first call must be tier 4's: %d tools, %d tokens", len(reqs[0].Tools), reqs[0].MaxTokens)
	}
	if !strings.Contains(res["reason"].(string), "top score 0.8618 < 0.95: straight to the agentic loop") {
		t.Fatalf("reason %q", res["reason"])
	}
}

func TestSourceRemovedWhileTheModelWorked(t *testing.T) {
	s, _ := llmSession(t, nil)
	res, _ := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": true})
	p, _ := pendingOf(t, res)
	if r, _ := call(t, s, "curate", map[string]any{"operations": []any{map[string]any{"type": "DELETE", "path": "operations/oncall/escalation.md", "reason": "obsolete"}}}); r["summary"].(map[string]any)["deleted"].(float64) != 1 {
		t.Fatalf("delete: %v", r)
	}
	res, _ = call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: "## Summary\nThe lead is paged.\n## Sources\n- operations/oncall/escalation.md"}})
	if res["needsLLM"] != true || !strings.Contains(res["reason"].(string), "every source of the answer was removed from the tree meanwhile (operations/oncall/escalation.md)") {
		t.Fatalf("an answer resting on a removed entry must not stand: %v", res)
	}
}

func TestModelAnswersServeTier0(t *testing.T) {
	s, _ := llmSession(t, nil)
	answer := "## Summary\nThe billing lead is paged.\n## Sources\n- operations/oncall/escalation.md"
	first, _ := drive(t, s, "query", map[string]any{"query": retryQuestion, "llm": true}, script(t, reply(answer)))
	for _, params := range []map[string]any{{"query": retryQuestion}, {"query": "Failed retry, escalation?", "llm": true}} {
		res, errObj := call(t, s, "query", params)
		if errObj != nil || res["status"] == "pending" {
			t.Fatalf("%v: %v %v", params, res, errObj)
		}
		if res["tier"].(float64) != 0 || res["answer"] != first["answer"] || fmt.Sprint(res["sources"]) != "[operations/oncall/escalation.md]" || res["needsLLM"] != false {
			t.Fatalf("%v: want the model's answer from the exact cache, got %v", params, res)
		}
		if _, ok := res["llm"]; ok || !strings.Contains(res["reason"].(string), "(was: no direct answer") {
			t.Fatalf("a cache hit carries no trace and names the cached reason: %v", res)
		}
	}
	// A write drops it, as it drops every cached answer.
	call(t, s, "curate", map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "engineering/payments", "title": "Refunds", "content": map[string]any{"narrative": "Refunds take five days."}, "reason": "test"}}})
	if res, _ := call(t, s, "query", map[string]any{"query": retryQuestion}); res["tier"].(float64) != 2 || res["needsLLM"] != true {
		t.Fatalf("after a write: %v", res)
	}
	// An answer worked out while the tree changed is not cached.
	res, _ := call(t, s, "query", map[string]any{"query": retryQuestion, "llm": true})
	p, _ := pendingOf(t, res)
	call(t, s, "curate", map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "engineering/payments", "title": "Chargebacks", "content": map[string]any{"narrative": "Chargebacks go to finance."}, "reason": "test"}}})
	if res, _ := call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: answer}}); res["tier"].(float64) != 3 {
		t.Fatalf("resume: %v", res)
	}
	if res, _ := call(t, s, "query", map[string]any{"query": retryQuestion}); res["tier"].(float64) != 2 {
		t.Fatalf("an answer from before a write was cached: %v", res)
	}
}
