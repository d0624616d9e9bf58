// Package curatefrom curates raw material through a model (docs/ABI.md
// §6.6): after preprocessing (and the compaction of large material) the
// model proposes curate operations, sees the result of each, and may fix
// and resend the ones that failed. The operations are staged on an overlay
// of the tree while the loop runs; only when it ends do they reach the
// tree, through the engine's curate path, so a cancelled or expired
// curation changes nothing.
package curatefrom

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/prompt"
	"github.com/arbormem/arbor/core/internal/search"
)

// compactTokens is the size the compaction passes aim for: CompactAbove
// characters at ~4 characters a token. Pass 2 aims at 0.6× this.
const compactTokens = api.CompactAbove / 4

// codeExtensions are files truncated at MaxCodeLines: beyond that a code
// file is mostly detail a knowledge entry would not keep.
var codeExtensions = map[string]bool{
	".go": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true, ".jsx": true,
	".py": true, ".rb": true, ".java": true, ".kt": true, ".scala": true, ".swift": true, ".c": true,
	".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".cs": true, ".rs": true, ".php": true,
	".sh": true, ".bash": true, ".sql": true, ".lua": true, ".dart": true, ".zig": true,
}

// Config is what a curation reads, and how it writes what it kept.
type Config struct {
	FS           host.FS
	Clock        host.Clock
	Catalog      *catalog.Catalog // the live tree; the curation stages on a clone
	Index        *search.Index    // the model's search tool reads the live index
	MaxFileBytes int
	Loops        *agent.Loops
	// Apply writes the operations that succeeded in the loop to the tree,
	// through the engine's curate path.
	Apply func([]api.Operation) api.CurateResult
}

// Start begins a curation of p's material and runs it until it needs the
// model (an api.Pending) or is done (an api.CurateFromResult).
func Start(cfg Config, p api.CurateFromParams) (any, error) {
	start := time.Now()
	notes, material, err := preprocess(p.Files)
	if err != nil {
		return nil, err
	}
	c, err := cfg.Loops.NewConv(p.TokenBudget, p.MaxIterations, cfg.Loops.Options().CurateTokenBudget)
	if err != nil {
		return nil, err
	}
	ov := newOverlay(cfg.FS)
	cat := cfg.Catalog.Clone()
	t := &curateTask{
		instruction: strings.TrimSpace(p.Instruction), source: material, material: material, apply: cfg.Apply,
		started: start, shadow: &curate.Curator{FS: ov, Clock: cfg.Clock, Catalog: cat, MaxFileBytes: cfg.MaxFileBytes},
		tools:  agent.NewToolbox(cfg.Index, cat, ov, prompt.CurateTools()),
		result: api.CurateFromResult{Files: notes, Attempts: []api.Attempt{}},
	}
	return cfg.Loops.Start("curateFrom", t, c)
}

// preprocess checks the files against the limits, cuts code files at
// MaxCodeLines and joins everything into one material text, each file
// under a header naming it.
func preprocess(files []api.SourceFile) ([]api.SourceNote, string, error) {
	switch {
	case len(files) == 0:
		return nil, "", api.Errorf(api.CodeInvalidParams, "curateFrom: files is required (1 to %d)", api.MaxSourceFiles)
	case len(files) > api.MaxSourceFiles:
		return nil, "", api.Errorf(api.CodeInvalidParams, "curateFrom: %d files, at most %d per call", len(files), api.MaxSourceFiles)
	}
	var notes []api.SourceNote
	var b strings.Builder
	for i, f := range files {
		name := strings.TrimSpace(f.Name)
		if name == "" {
			name = fmt.Sprintf("file %d", i+1)
		}
		text, err := f.Text()
		if err != nil {
			return nil, "", api.Errorf(api.CodeInvalidParams, "curateFrom: %s: %v", name, err)
		}
		content := strings.TrimSpace(text)
		if content == "" {
			return nil, "", api.Errorf(api.CodeInvalidParams, "curateFrom: %s is empty", name)
		}
		note := api.SourceNote{Name: name}
		if codeExtensions[strings.ToLower(path.Ext(name))] {
			lines := strings.Split(content, "\n")
			if len(lines) > api.MaxCodeLines {
				note.DroppedLines = len(lines) - api.MaxCodeLines
				content = strings.Join(lines[:api.MaxCodeLines], "\n") + fmt.Sprintf("\n[… %d more lines not shown]", note.DroppedLines)
			}
		}
		note.Chars = utf8.RuneCountInString(content)
		if note.Chars > api.MaxSourceChars {
			return nil, "", api.Errorf(api.CodeInvalidParams, "curateFrom: %s has %d characters, at most %d per file: split it", name, note.Chars, api.MaxSourceChars)
		}
		notes = append(notes, note)
		fmt.Fprintf(&b, "=== file: %s ===\n%s\n\n", name, content)
	}
	return notes, strings.TrimSpace(b.String()), nil
}

// curateTask is one curation from raw material: compaction passes while
// the material is too large, then the curate loop.
type curateTask struct {
	apply       func([]api.Operation) api.CurateResult
	instruction string
	source      string // the material as given, for the example-copy guard
	material    string // what the model curates from (compacted when large)
	started     time.Time
	stage       string // "", "compact1", "compact2", "curate"
	shadow      *curate.Curator
	tools       *agent.Toolbox
	msgs        []api.Message
	staged      []api.Operation // succeeded on the overlay, in order
	result      api.CurateFromResult
}

func (t *curateTask) Abandon() { t.shadow, t.tools, t.msgs, t.staged = nil, nil, nil, nil }

func (t *curateTask) Advance(c *agent.Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any) {
	switch t.stage {
	case "":
		if n := utf8.RuneCountInString(t.material); n > api.CompactAbove {
			t.result.Compaction = &api.Compaction{InputChars: n}
			return t.compact(c, 1)
		}
		return t.startCurate(c)
	case "compact1", "compact2":
		return t.afterCompact(c, resp, fail)
	}
	if fail != nil {
		return nil, t.finish(c, fmt.Sprintf("the model call failed (%s: %s)", fail.Code, fail.Message))
	}
	return t.afterCurate(c, resp)
}

// compact asks for pass 1 (a normal summary) or pass 2 (an aggressive
// one, 0.6× the size). When the budget has no room, it goes straight to
// pass 3, which needs no model.
func (t *curateTask) compact(c *agent.Conv, pass int) (*api.LLMRequest, any) {
	tokens := compactTokens
	if pass == 2 {
		tokens = compactTokens * 6 / 10
	}
	room := c.Room(tokens)
	if room == 0 {
		t.result.Compaction.Notes = append(t.result.Compaction.Notes, fmt.Sprintf("pass %d skipped: %s", pass, c.Exhausted()))
		return t.truncate(c)
	}
	t.stage = fmt.Sprintf("compact%d", pass)
	c.Purpose = t.stage
	words := tokens * 3 / 5 // ~0.6 words a token leaves room for names and numbers
	return &api.LLMRequest{
		Messages: []api.Message{
			{Role: api.RoleSystem, Content: prompt.CompactSystem(pass == 2, words)},
			{Role: api.RoleUser, Content: t.source},
		},
		MaxTokens: room, Temperature: prompt.CurateTemperature,
	}, nil
}

// afterCompact keeps a summary that fits; otherwise (too long, empty, a
// failed call) it escalates to the next pass.
func (t *curateTask) afterCompact(c *agent.Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any) {
	pass := 1
	if t.stage == "compact2" {
		pass = 2
	}
	cmp := t.result.Compaction
	var text string
	switch {
	case fail != nil:
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("pass %d failed: %s: %s", pass, fail.Code, fail.Message))
	case strings.TrimSpace(resp.Content) == "":
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("pass %d gave an empty summary", pass))
	default:
		text = strings.TrimSpace(resp.Content)
		if n := utf8.RuneCountInString(text); n > api.CompactAbove {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("pass %d gave %d characters, still over %d", pass, n, api.CompactAbove))
			// The longer summary is still smaller than the source: pass 3
			// truncates it rather than the source if it comes to that.
			if n < utf8.RuneCountInString(t.material) {
				t.material = text
			}
			text = ""
		}
	}
	if text != "" {
		t.material = text
		cmp.Pass, cmp.OutputChars = pass, utf8.RuneCountInString(text)
		return t.startCurate(c)
	}
	if pass == 1 {
		return t.compact(c, 2)
	}
	return t.truncate(c)
}

// truncate is pass 3: deterministic, no model, always fits.
func (t *curateTask) truncate(c *agent.Conv) (*api.LLMRequest, any) {
	cmp := t.result.Compaction
	n := utf8.RuneCountInString(t.material)
	kept := truncateToFit(t.material, func(s string) bool {
		return agent.EstimateTokens(s) <= compactTokens && utf8.RuneCountInString(s) <= api.CompactAbove
	})
	k := utf8.RuneCountInString(kept)
	t.material = kept + fmt.Sprintf("\n[… material cut here: %d of %d characters kept]", k, n)
	cmp.Pass, cmp.OutputChars = 3, k
	return t.startCurate(c)
}

// truncateToFit returns the longest prefix of s, on a rune boundary and
// backed off to a line or word end when one is near, for which fits holds.
// fits must be monotone (a prefix of a fitting text fits). A binary search
// over the prefix length takes O(log n) calls of fits, so it ends on any
// input; this is what guarantees a curation always terminates.
func truncateToFit(s string, fits func(string) bool) string {
	if fits(s) {
		return s
	}
	// cut backs a byte offset up to a rune start, so every candidate is
	// valid UTF-8 and the search needs no table of rune offsets.
	cut := func(i int) int {
		for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
			i--
		}
		return i
	}
	lo, hi := 0, len(s) // s[:lo] fits (the empty prefix does), s[:hi] does not
	for hi-lo > 1 {
		mid := cut(lo + (hi-lo)/2)
		if mid <= lo {
			// The rune at lo spans the midpoint: its end is the only
			// candidate left in between.
			_, n := utf8.DecodeRuneInString(s[lo:])
			if mid = lo + n; mid >= hi {
				break
			}
		}
		if fits(s[:mid]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	// A cut within the last tenth may move back to a line, else a word end.
	floor := lo - lo/10
	for _, sep := range []string{"\n", " "} {
		if i := strings.LastIndex(s[:lo], sep); i > 0 && i >= floor {
			return strings.TrimRight(s[:i], " \n")
		}
	}
	return s[:lo]
}

// startCurate opens the curate loop.
func (t *curateTask) startCurate(c *agent.Conv) (*api.LLMRequest, any) {
	t.stage = "curate"
	t.msgs = []api.Message{
		{Role: api.RoleSystem, Content: prompt.CurateSystem(t.tools.Overview())},
		{Role: api.RoleUser, Content: prompt.CurateUser(t.instruction, t.material)},
	}
	return t.next(c)
}

func (t *curateTask) next(c *agent.Conv) (*api.LLMRequest, any) {
	room := c.Room(prompt.CurateMaxTokens)
	if room == 0 {
		return nil, t.finish(c, "stopped: "+c.Exhausted())
	}
	c.Purpose = "curate"
	return &api.LLMRequest{Messages: t.msgs, Tools: prompt.CurateTools(), MaxTokens: room, Temperature: prompt.CurateTemperature}, nil
}

// afterCurate runs the model's tool calls (curate on the overlay, the
// read-only tools on the overlay's view) and feeds back every result; a
// turn without tool calls ends the loop.
func (t *curateTask) afterCurate(c *agent.Conv, resp *api.LLMResponse) (*api.LLMRequest, any) {
	if len(resp.ToolCalls) == 0 {
		t.result.Message = strings.TrimSpace(resp.Content)
		return nil, t.finish(c, "the model finished")
	}
	turn := c.Steps()
	t.msgs = agent.Answer(t.msgs, resp, turn, func(tc api.ToolCall) string {
		if tc.Name == prompt.ToolCurate {
			return t.curate(tc.Arguments, turn)
		}
		return t.tools.Run(tc)
	})
	return t.next(c)
}

// curate applies one curate tool call to the overlay and returns the
// per-operation results for the model. Operations that copy the prompt's
// example are refused before they are applied.
func (t *curateTask) curate(args string, turn int) string {
	var a struct {
		Operations []json.RawMessage `json:"operations"`
	}
	if err := agent.DecodeArgs(args, &a); err != nil {
		return "error: " + err.Error()
	}
	if len(a.Operations) == 0 {
		return "error: operations is required: a list of at least one operation"
	}
	res := curate.Result{Applied: []curate.Applied{}}
	for _, raw := range a.Operations {
		var op api.Operation
		var ap curate.Applied
		refused := false
		if err := json.Unmarshal(raw, &op); err != nil {
			ap.Applied = api.Applied{Type: op.Type, Path: op.Path, Status: api.StatusFailed, Message: fmt.Sprintf("operation is not valid: %v", err)}
		} else if phrase, copied := prompt.CopiedExample(op.Title, op, t.source); copied {
			refused = true
			ap.Applied = api.Applied{Type: strings.ToUpper(op.Type), Path: op.Path, Status: api.StatusFailed,
				Message: fmt.Sprintf("refused: it repeats the invented example of the instructions (%q), which the material does not say; write only facts from the material", phrase)}
		} else {
			ap = t.shadow.Apply([]api.Operation{op}).Applied[0]
			if ap.Status == api.StatusSuccess {
				t.staged = append(t.staged, op)
			}
		}
		res.Add(ap)
		t.result.Attempts = append(t.result.Attempts, api.Attempt{Turn: turn, Applied: ap.Applied, Refused: refused})
	}
	b, _ := json.Marshal(res.API())
	return string(b)
}

// finish ends the curation: the operations that succeeded on the overlay
// are applied to the tree through the curate path (each atomic; one that
// fails now, because the tree changed meanwhile, is reported failed and
// changes nothing).
func (t *curateTask) finish(c *agent.Conv, why string) api.CurateFromResult {
	r := t.result
	r.Applied = []api.Applied{}
	if len(t.staged) > 0 {
		res := t.apply(t.staged)
		r.Applied, r.Summary = res.Applied, res.Summary
	}
	failed := 0
	for _, a := range r.Attempts {
		if a.Status != api.StatusSuccess {
			failed++
		}
	}
	r.Reason = fmt.Sprintf("%s; %d operations proposed, %d failed or refused in the loop, %d written", why, len(r.Attempts), failed, len(r.Applied)-r.Summary.Failed)
	if len(r.Attempts) == 0 {
		r.Reason = why + "; the model proposed no operation"
	}
	r.LLM = c.Trace
	r.TookMs = api.TookMs(t.started)
	t.Abandon()
	return r
}
