package retrieve

import (
	"fmt"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/prompt"
)

// QueryLLM runs the tiers of docs/ABI.md §4.4 and §6.4. Tiers 0–2 answer as Query does;
// when they cannot and p.LLM is set, it returns an api.Pending, and the
// final QueryResult comes from Resume.
func (rv *Retriever) QueryLLM(p api.QueryParams) (any, error) {
	start := time.Now()
	o, err := rv.query(p.SearchParams)
	if err != nil || !p.LLM || !o.res.NeedsLLM {
		return o.res, err
	}
	c, err := rv.loops.NewConv(p.TokenBudget, p.MaxIterations, rv.loops.Options().TokenBudget)
	if err != nil {
		return nil, err
	}
	limit, _ := p.Check(5) // query checked it
	t := &askTask{rv: rv, question: p.Query, norm: normalizeQuery(p.Query), limit: limit, gen: rv.gen, base: o, started: start}
	return rv.loops.Start("query", t, c)
}

// askTask is a query beyond tier 2. It first tries tier 3 (one call over
// the prefetched entries) when the search found something reasonably
// strong, and goes to tier 4 (the agentic loop) when tier 3 says the
// entries do not cover the question or need others (NOT COVERED / NEEDS
// MORE), or directly when the top score is below llm.tier3MinScore.
type askTask struct {
	rv       *Retriever
	question string
	norm     string // the cache key's query and limit
	limit    int
	gen      uint64  // the tree's write count when the query started
	base     outcome // what tier 2 found
	started  time.Time
	tier     int
	tools    *agent.Toolbox
	msgs     []api.Message
	reasons  []string // why each stage ended, joined into the final reason
	retries  int      // format reminders sent in tier 4
}

// maxReminders bounds the answers tier 4 may send back for a format fix.
const maxReminders = 2

func (t *askTask) Abandon() { t.msgs, t.tools = nil, nil }

func (t *askTask) Advance(c *agent.Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any) {
	switch {
	case t.tier == 0:
		if top := topScore(t.base.res.Results); top < t.rv.loops.Options().Tier3MinScore {
			t.reasons = append(t.reasons, fmt.Sprintf("top score %.4f < %.2f: straight to the agentic loop", top, t.rv.loops.Options().Tier3MinScore))
			return t.startTier4(c, "")
		}
		return t.tier3(c)
	case fail != nil:
		why := fmt.Sprintf("tier %d: the model call failed (%s: %s)", t.tier, fail.Code, fail.Message)
		if t.tier == api.TierLLM {
			return nil, t.fallback(c, why)
		}
		return nil, t.bestSoFar(c, why)
	case t.tier == api.TierLLM:
		return t.afterTier3(c, resp)
	}
	return t.afterTier4(c, resp)
}

// tier3 asks one grounded call over the top results.
func (t *askTask) tier3(c *agent.Conv) (*api.LLMRequest, any) {
	t.tier = api.TierLLM
	room := c.Room(prompt.Tier3MaxTokens)
	if room == 0 {
		return nil, t.fallback(c, "tier 3 not tried: "+c.Exhausted())
	}
	t.tools = t.rv.tools(t.base.scope)
	var docs []prompt.Document
	for _, h := range t.base.res.Results {
		data, err := t.rv.fs.ReadFile(h.Path)
		if err != nil {
			t.rv.log.Log("warn", fmt.Sprintf("tier 3: prefetch %s: %v", h.Path, err))
			continue
		}
		t.tools.See(h.Path)
		docs = append(docs, prompt.Document{Path: h.Path, Text: agent.Clip(string(data), prompt.ReadMaxChars)})
	}
	c.Purpose = "tier3"
	return &api.LLMRequest{
		Messages: []api.Message{
			{Role: api.RoleSystem, Content: prompt.Tier3System},
			{Role: api.RoleUser, Content: prompt.Tier3User(t.question, docs)},
		},
		MaxTokens: room, Temperature: prompt.Tier3Temperature,
	}, nil
}

// afterTier3 reads tier 3's answer: a grounded answer is final; a model
// saying the entries do not suffice escalates to tier 4; an answer that
// cannot be checked (no format, no known source) is not passed off as
// grounded: the search results stand, with the reason.
func (t *askTask) afterTier3(c *agent.Conv, resp *api.LLMResponse) (*api.LLMRequest, any) {
	a := prompt.ParseAnswer(resp.Content, t.known)
	switch {
	case a.NotCovered:
		t.reasons = append(t.reasons, "tier 3: the top entries do not cover the question")
		return t.startTier4(c, "the top entries do not cover the question")
	case a.NeedsMore != "":
		t.reasons = append(t.reasons, "tier 3: needs more entries ("+a.NeedsMore+")")
		return t.startTier4(c, a.NeedsMore)
	case a.Problem != "":
		return nil, t.fallback(c, "tier 3: the model's answer was not used: "+a.Problem)
	}
	return nil, t.final(c, a, "tier 3: grounded answer from the top entries")
}

func (t *askTask) known(p string) bool { return t.tools.Seen(p) }

// startTier4 opens the agentic loop. note is what tier 3 said was missing.
func (t *askTask) startTier4(c *agent.Conv, note string) (*api.LLMRequest, any) {
	t.tier = api.TierAgentic
	if t.tools == nil {
		t.tools = t.rv.tools(t.base.scope)
	}
	var hits strings.Builder
	for _, h := range t.base.res.Results {
		t.tools.See(h.Path)
		fmt.Fprintf(&hits, "- %s (%.4f) %s — %s\n", h.Path, h.Score, h.Title, h.Excerpt)
	}
	t.msgs = []api.Message{
		{Role: api.RoleSystem, Content: prompt.Tier4System(t.tools.Overview())},
		{Role: api.RoleUser, Content: prompt.Tier4User(t.question, hits.String(), note)},
	}
	return t.next(c)
}

// next asks the model for the loop's next turn, or ends the loop when the
// budget or the iterations are spent.
func (t *askTask) next(c *agent.Conv) (*api.LLMRequest, any) {
	room := c.Room(prompt.Tier4MaxTokens)
	if room == 0 {
		return nil, t.bestSoFar(c, "tier 4 stopped: "+c.Exhausted())
	}
	c.Purpose = "tier4"
	return &api.LLMRequest{Messages: t.msgs, Tools: prompt.QueryTools(), MaxTokens: room, Temperature: prompt.Tier4Temperature}, nil
}

// afterTier4 runs the tools the model called, or reads its final answer.
func (t *askTask) afterTier4(c *agent.Conv, resp *api.LLMResponse) (*api.LLMRequest, any) {
	if len(resp.ToolCalls) > 0 {
		t.msgs = agent.Answer(t.msgs, resp, c.Steps(), t.tools.Run)
		return t.next(c)
	}
	a := prompt.ParseAnswer(resp.Content, t.known)
	switch {
	case a.NotCovered:
		return nil, t.notCovered(c)
	case a.NeedsMore != "":
		a.Problem = "it says more entries are needed (" + a.NeedsMore + "); use the tools to find them"
	}
	if a.Problem == "" {
		return nil, t.final(c, a, "tier 4: grounded answer after the agentic loop")
	}
	if t.retries >= maxReminders {
		return nil, t.bestSoFar(c, fmt.Sprintf("tier 4: the model's answer was not used after %d reminders: %s", maxReminders, a.Problem))
	}
	t.retries++
	t.msgs = append(t.msgs,
		api.Message{Role: api.RoleAssistant, Content: resp.Content},
		api.Message{Role: api.RoleUser, Content: prompt.FormatReminder(a.Problem)})
	return t.next(c)
}

// reason chains why each stage ended: tier 2's reason first.
func (t *askTask) reason(why string) string {
	return strings.Join(append(append([]string{t.base.res.Reason}, t.reasons...), why), "; ")
}

// result is a final QueryResult of tier t.tier with the trace.
func (t *askTask) result(c *agent.Conv, why string) api.QueryResult {
	res := t.base.res
	res.Tier = t.tier
	res.TierName = map[int]string{api.TierLLM: "llm", api.TierAgentic: "agentic"}[t.tier]
	res.NeedsLLM = false
	res.Reason = t.reason(why)
	trace := c.Trace
	res.LLM = &trace
	res.TookMs = api.TookMs(t.started)
	return res
}

// final is a grounded answer: only known entries are cited, and they
// count as accessed (they are presented as the answer).
func (t *askTask) final(c *agent.Conv, a prompt.Answer, why string) api.QueryResult {
	if len(a.Unknown) > 0 {
		why += "; dropped sources the model was not shown: " + strings.Join(a.Unknown, ", ")
	}
	// Calls served while the model worked may have removed a source: an
	// answer resting only on removed entries is no longer grounded.
	var kept, gone []string
	for _, p := range a.Sources {
		entry := t.rv.catalog.Has(p)
		_, context := t.rv.catalog.Context(p)
		if entry || context {
			kept = append(kept, p)
		} else {
			gone = append(gone, p)
		}
	}
	if len(gone) > 0 {
		if len(kept) == 0 {
			return t.fallback(c, fmt.Sprintf("tier %d: every source of the answer was removed from the tree meanwhile (%s)", t.tier, strings.Join(gone, ", ")))
		}
		why += "; dropped sources removed from the tree meanwhile: " + strings.Join(gone, ", ")
		a.Sources = kept
	}
	res := t.result(c, why)
	res.Answer = a.Render()
	res.Sources = a.Sources
	for _, p := range a.Sources {
		t.rv.signals.Access(p)
	}
	t.cache(res)
	return res
}

// cache keeps a model's final answer for tier 0, as tier 2's answers are
// kept, while the tree stays as the answer saw it: the same question is
// then answered at once, with or without a model. Not cached: answers
// worked out while the tree changed, incomplete loops, fallbacks (a later
// call may do better), answers to a filtered or sorted question. The trace stays with this result only.
func (t *askTask) cache(res api.QueryResult) {
	if t.rv.gen != t.gen || t.base.scoped {
		return
	}
	res.LLM = nil
	t.rv.cache.put(t.question, t.norm, t.limit, "", outcome{res: res, hits: t.base.hits})
}

func (t *askTask) notCovered(c *agent.Conv) api.QueryResult {
	res := t.result(c, "tier 4: the model found nothing in the tree that answers the question")
	res.Answer = "The stored knowledge does not answer this question."
	res.Sources = []string{}
	t.cache(res)
	return res
}

// fallback ends with tier 2's results, still marked as needing a model,
// and says why no model answer is given.
func (t *askTask) fallback(c *agent.Conv, why string) api.QueryResult {
	res := t.base.res
	res.Reason = t.reason(why)
	trace := c.Trace
	res.LLM = &trace
	res.TookMs = api.TookMs(t.started)
	return res
}

// bestSoFar ends the loop without a final answer: the entries the model
// read, which are grounded by construction, or tier 2's results when it
// read none.
func (t *askTask) bestSoFar(c *agent.Conv, why string) api.QueryResult {
	read := t.tools.ReadOrder()
	if len(read) == 0 {
		return t.fallback(c, why+"; no entry was read, the search results stand")
	}
	res := t.result(c, why+"; the entries read are listed")
	res.Incomplete = true
	var b strings.Builder
	b.WriteString("No final answer was reached. The entries read, which may hold it:")
	for _, p := range read {
		if en, ok := t.rv.catalog.Get(p); ok {
			fmt.Fprintf(&b, "\n- %s", en.Title)
			if en.Summary != "" {
				fmt.Fprintf(&b, " — %s", en.Summary)
			}
			fmt.Fprintf(&b, " (%s)", p)
		} else {
			fmt.Fprintf(&b, "\n- %s", p)
		}
	}
	res.Answer = b.String()
	res.Sources = read
	return res
}

func topScore(hits []api.Hit) float64 {
	top := 0.0
	for _, h := range hits {
		top = max(top, h.Score)
	}
	return top
}
