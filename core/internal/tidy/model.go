package tidy

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/prompt"
	"github.com/arbormem/arbor/core/internal/tree"
)

// A merge's text written by the model (docs/ABI.md §6.7): one model call
// per near-duplicate group, each answer checked and, when it cannot be
// used, replaced by the deterministic merge of that group alone. One call
// per group rather than one for the whole plan: each answer is one entry
// to parse and check on its own, so a bad answer costs one group, not the
// plan; a request holds one group, so its size is bounded by the group's
// (checked below) whatever the size of the plan; and the model never has
// to keep several entries apart in one answer.

// The limits of the checks of a model's merge.
const (
	// maxModelChars is the most the copies of one group may hold together
	// to be sent: more than a curateFrom file, and the answer would not
	// fit prompt.TidyMergeMaxTokens anyway.
	maxModelChars = api.MaxSourceChars
	// slackChars is what an answer may hold beyond the copies together
	// (the marks of disagreements, a summary): more is not a merge.
	slackChars = 2000
	// minNarrativeShare is the least share of the fullest copy's
	// narrative, in words, the merged narrative must keep: a merge keeps
	// every statement, so a much shorter text has dropped some.
	minNarrativeShare = 0.75
)

// Written is what the model wrote for one merge of a plan.
type Written struct {
	// Paths are the group, the entry kept first; Files the rendered
	// entries the model was shown, in that order, so that an entry
	// changed since is seen.
	Paths []string
	Files []string
	// Entry is the model's merged entry, checked; nil when the model's
	// answer cannot be used, and Warning says why.
	Entry   *tree.Entry
	Warning string
}

// ModelConfig is what a model-written apply needs.
type ModelConfig struct {
	Loops   *agent.Loops
	Catalog *catalog.Catalog
	// Finish gets every merge's outcome once the last model call is
	// answered (or cannot be made), and returns the call's final result:
	// the engine applies the plan then, so nothing is written before.
	Finish func(written []Written, c *agent.Conv) any
}

// StartModel asks the model for the merged text of each merge of plan,
// one call at a time; it returns an api.Pending, or Finish's result when
// no call is needed.
func StartModel(cfg ModelConfig, plan []api.TidySuggestion, c *agent.Conv) (any, error) {
	t := &modelTask{finish: cfg.Finish}
	for _, s := range plan {
		if s.Kind != api.TidyMerge {
			continue
		}
		w := Written{Paths: s.Paths}
		for _, p := range s.Paths {
			e, ok := cfg.Catalog.Get(p)
			if !ok {
				w.Files = nil
				break
			}
			w.Files = append(w.Files, string(tree.Render(e)))
		}
		t.out = append(t.out, w)
	}
	return cfg.Loops.Start("tidy", t, c)
}

// modelTask is the calls of one apply: out[i] is asked after out[i-1].
type modelTask struct {
	out    []Written
	next   int  // the group the next request is for
	asked  bool // out[next] waits for the answer
	finish func([]Written, *agent.Conv) any
}

func (t *modelTask) Abandon() { t.out = nil }

func (t *modelTask) Advance(c *agent.Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any) {
	if t.asked {
		w := &t.out[t.next]
		switch {
		case fail != nil:
			w.Warning = fmt.Sprintf("the model call failed (%s: %s)", fail.Code, fail.Message)
		default:
			e, err := readMerge(w.Files, resp.Content)
			if err != nil {
				w.Warning = "the model's merge cannot be used: " + err.Error()
			}
			w.Entry = e
		}
		t.asked = false
		t.next++
	}
	for ; t.next < len(t.out); t.next++ {
		w := &t.out[t.next]
		if len(w.Files) == 0 {
			w.Warning = "an entry of the group could not be read"
			continue
		}
		n := 0
		for _, f := range w.Files {
			n += utf8.RuneCountInString(f)
		}
		if n > maxModelChars {
			w.Warning = fmt.Sprintf("not sent to the model: the copies hold %d characters together, more than %d", n, maxModelChars)
			continue
		}
		room := c.Room(min(prompt.TidyMergeMaxTokens, agent.EstimateTokens(strings.Join(w.Files, ""))+512))
		if room == 0 {
			w.Warning = "not sent to the model: " + c.Exhausted()
			continue
		}
		docs := make([]prompt.Document, len(w.Paths))
		for i, p := range w.Paths {
			docs[i] = prompt.Document{Path: p, Text: w.Files[i]}
		}
		t.asked = true
		c.Purpose = "tidy"
		return &api.LLMRequest{Messages: []api.Message{
			{Role: api.RoleSystem, Content: prompt.TidyMergeSystem},
			{Role: api.RoleUser, Content: prompt.TidyMergeUser(docs)},
		}, MaxTokens: room, Temperature: prompt.TidyMergeTemperature}, nil
	}
	out := t.out
	t.Abandon()
	return nil, t.finish(out, c)
}

// readMerge reads the model's answer as one entry and checks it against
// the copies it merges (files, rendered): it must be an entry with front
// matter, not empty, not larger than the copies together and some slack,
// hold every fact of every copy (by subject and statement, as curate
// unites facts), every part of a narrative a copy has, and at least
// minNarrativeShare of the words of the fullest copy's narrative.
func readMerge(files []string, answer string) (*tree.Entry, error) {
	text := unfence(strings.TrimSpace(answer))
	if text == "" {
		return nil, fmt.Errorf("the answer is empty")
	}
	total := 0
	for _, f := range files {
		total += utf8.RuneCountInString(f)
	}
	if n := utf8.RuneCountInString(text); n > total+slackChars {
		return nil, fmt.Errorf("the answer holds %d characters, more than the copies together (%d) and %d more", n, total, slackChars)
	}
	if !strings.HasPrefix(text, "---") {
		return nil, fmt.Errorf("not an entry: it does not start with front matter (---)")
	}
	e, err := tree.ParseEntry("", []byte(text))
	if err != nil {
		return nil, fmt.Errorf("not an entry: %v", err)
	}
	longest := 0
	for i, f := range files {
		c, err := tree.ParseEntry("", []byte(f))
		if err != nil {
			return nil, fmt.Errorf("copy %d: %v", i+1, err)
		}
		for _, f := range c.Facts {
			if !slices.ContainsFunc(e.Facts, func(g api.Fact) bool {
				return strings.EqualFold(strings.TrimSpace(g.Subject), strings.TrimSpace(f.Subject)) && strings.EqualFold(strings.TrimSpace(g.Statement), strings.TrimSpace(f.Statement))
			}) {
				return nil, fmt.Errorf("it drops the fact %q", tree.FactText(f))
			}
		}
		for _, p := range api.NarrativeParts {
			if strings.TrimSpace(*p.Get(&c.Narrative)) != "" && strings.TrimSpace(*p.Get(&e.Narrative)) == "" {
				return nil, fmt.Errorf("it drops the narrative's %s", partName(p.Name))
			}
		}
		longest = max(longest, narrativeWords(c.Narrative))
	}
	if n := narrativeWords(e.Narrative); float64(n) < minNarrativeShare*float64(longest) {
		return nil, fmt.Errorf("its narrative has %d words, less than %.0f%% of the fullest copy's %d", n, 100*minNarrativeShare, longest)
	}
	return e, nil
}

// unfence drops a code fence around the whole answer, the commonest
// wrapping a model adds against the instructions; the entry inside is
// what it wrote.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return s
	}
	return strings.TrimSpace(s[nl+1 : len(s)-3])
}

func partName(name string) string {
	if name == "text" {
		return "text"
	}
	return `"### ` + strings.ToUpper(name[:1]) + name[1:] + `" part`
}

func narrativeWords(n api.Narrative) int {
	w := 0
	for _, p := range api.NarrativeParts {
		w += len(strings.Fields(*p.Get(&n)))
	}
	return w
}

// WithModel puts the model's merges into plan, a plan made when the model
// calls ended (the tree may have changed while the model worked): a merge
// of the same group whose entries are as the model saw them takes the
// model's text in its last MERGE (title, summary, narrative, facts; curate
// unites the rest of the copies as for any MERGE). Every other merge keeps
// the deterministic text and says why. The earlier MERGEs of a group keep
// their deterministic text: a suggestion stopped part-way then leaves a
// deterministic merge of what it merged.
func WithModel(plan []api.TidySuggestion, written []Written, cat *catalog.Catalog) []api.TidySuggestion {
	for i := range plan {
		s := &plan[i]
		if s.Kind != api.TidyMerge {
			continue
		}
		s.MergedBy = api.MergedByTidy
		j := slices.IndexFunc(written, func(w Written) bool { return slices.Equal(w.Paths, s.Paths) })
		if j < 0 {
			s.Warning = "merged deterministically: the group was found after the model calls (the tree changed meanwhile)"
			continue
		}
		w := written[j]
		switch {
		case w.Entry == nil:
			s.Warning = w.Warning + "; merged deterministically"
		case !unchanged(cat, w):
			s.Warning = "merged deterministically: an entry of the group changed while the model wrote the merge"
		default:
			last := &s.Operations[len(s.Operations)-1]
			e := w.Entry
			last.Title, last.Summary = e.Title, e.Summary
			n := e.Narrative
			last.Content.Narrative = &n
			last.Content.Facts = e.Facts
			last.Reason += "; merged text written by the model"
			s.Reason = strings.Replace(s.Reason, "merged into it, facts united by statement, the fuller text kept and differing statements marked",
				"merged into it, the text written by the model (every fact of every copy kept, checked)", 1)
			s.MergedBy = api.MergedByModel
		}
	}
	return plan
}

// unchanged reports whether w's entries render now as the model saw them.
func unchanged(cat *catalog.Catalog, w Written) bool {
	for i, p := range w.Paths {
		e, ok := cat.Get(p)
		if !ok || string(tree.Render(e)) != w.Files[i] {
			return false
		}
	}
	return true
}
