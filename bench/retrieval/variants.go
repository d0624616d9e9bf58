package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/internal/ablation"
)

// mechanism is one row of the ablation: a retrieval mechanism of the
// engine, which a variant of Arbor switches off alone.
type mechanism struct {
	name  string // as -ablate names it
	where string // where it lives
	what  string // what it does when on
	off   ablation.Set
	// indexing: the mechanism acts when entries are indexed, so its
	// variant curates a tree of its own; the others open a copy of the
	// tree Arbor as it is curated.
	indexing bool
	// lifecycle: the mechanism is the lifecycle ordering, which is
	// switched off through the lifecycle model (relevance alone), a
	// parameter every host can set, rather than through the ablation
	// switches.
	lifecycle bool
}

// mechanisms are the ablation's rows, in the order the engine applies
// them: search, then the evidence rules, then the ordering and the cache.
var mechanisms = []mechanism{
	{name: "scaffolding", where: "core/internal/search/scaffold.go", what: "question scaffolding (\"how many times\", \"can you tell me\") left out of the terms", off: ablation.Of(ablation.Scaffolding)},
	{name: "title-boost", where: "core/internal/search/index.go", what: "the title field ×3 (off: ×1)", off: ablation.Of(ablation.TitleBoost)},
	{name: "assistant-aside", where: "core/internal/atoms/turns.go, core/internal/search", what: "an assistant's turns in their own field at ×0.5 (off: in the content)", off: ablation.Of(ablation.AssistantAside), indexing: true},
	{name: "prefix", where: "core/internal/search/query.go", what: "the last word also matches the words it begins (×0.4)", off: ablation.Of(ablation.PrefixExpansion)},
	{name: "fuzzy", where: "core/internal/search/query.go", what: "words of 5+ letters also match the words one edit away (×0.3)", off: ablation.Of(ablation.FuzzyExpansion)},
	{name: "time-window", where: "core/internal/retrieve/query.go", what: "entries dated within a time the question names with confidence ×2, when that time holds at most half of the pool", off: ablation.Of(ablation.TimeWindow)},
	{name: "duration-words", where: "core/internal/atoms/duration.go", what: "words asking for a duration (\"how many days ago\") left out of the search", off: ablation.Of(ablation.DurationWords)},
	{name: "named-authors", where: "core/internal/retrieve/authors.go", what: "entries by a person the question names ×1.5", off: ablation.Of(ablation.NamedAuthors)},
	{name: "siblings", where: "core/internal/retrieve/siblings.go", what: "pieces of an exchange ×(1 + 0.6 × their episode's evidence)", off: ablation.Of(ablation.Siblings)},
	{name: "openers", where: "core/internal/retrieve/siblings.go", what: "the piece opening an episode ×1.3", off: ablation.Of(ablation.Openers)},
	{name: "own-words", where: "core/internal/retrieve/ownwords.go", what: "pieces ×(1 + 0.5 × the share of the question's terms they say themselves)", off: ablation.Of(ablation.OwnWords)},
	{name: "piece-length", where: "core/internal/retrieve/length.go", what: "pieces ×(words they say / the pool's median, at most 2)^0.05", off: ablation.Of(ablation.PieceLength)},
	{name: "replied-to", where: "core/internal/retrieve/replied.go", what: "the turns the 2 best matches reply to get 0.5 of their score (×0.5 a turn further back), brought in when not among the matches", off: ablation.Of(ablation.RepliedTo)},
	{name: "lifecycle-order", where: "core/internal/retrieve/answer.go", what: "results ordered by the lifecycle's compound score (relevance, importance, recency) (off: by relevance alone)", lifecycle: true},
	{name: "fuzzy-cache", where: "core/internal/retrieve/cache.go", what: "tier 1: a cached direct answer serves a near-copy question", off: ablation.Of(ablation.FuzzyCache)},
}

// parseMechanisms reads -ablate: "all", or names separated by commas.
func parseMechanisms(s string) ([]mechanism, error) {
	if s == "all" {
		return mechanisms, nil
	}
	var out []mechanism
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, m := range mechanisms {
			if m.name == name {
				out, found = append(out, m), true
			}
		}
		if !found {
			var names []string
			for _, m := range mechanisms {
				names = append(names, m.name)
			}
			return nil, fmt.Errorf("-ablate: no mechanism %q (there are %s)", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// control is the ablation's control: Arbor with nothing off, on a copy of
// its tree like the variants that do not curate their own. It must rank
// as Arbor does, and its latency difference is the noise of the others'.
var control = mechanism{name: "none (control)", where: "—", what: "nothing is switched off: Arbor on a copy of its tree"}

// variant is one configuration of Arbor in a run: as it is (sysArbor), or
// with one mechanism off.
type variant struct {
	name      string // its system name
	mechanism string // "" for Arbor as it is
	off       ablation.Set
	lifecycle *api.LifecycleModel // nil: the defaults
	indexing  bool                // curates a tree of its own
}

// ablatedName is the system name of Arbor without mechanism m.
func ablatedName(m string) string { return sysArbor + " without " + m }

// variants are Arbor as it is, with the -lifecycle parameters, and, when
// ms is not empty, the control and Arbor without each mechanism of ms.
func variants(lc *api.LifecycleModel, ms []mechanism) []variant {
	out := []variant{{name: sysArbor, lifecycle: lc}}
	if len(ms) > 0 {
		ms = append([]mechanism{control}, ms...)
	}
	for _, m := range ms {
		v := variant{name: ablatedName(m.name), mechanism: m.name, off: m.off, lifecycle: lc, indexing: m.indexing}
		if m.name == control.name {
			v.name = sysArbor + " (control)"
		}
		if m.lifecycle {
			v.lifecycle = relevanceOnly()
		}
		out = append(out, v)
	}
	return out
}

// relevanceOnly is the lifecycle model that orders by relevance (raw
// score over the best) alone.
func relevanceOnly() *api.LifecycleModel {
	p := api.DefaultLifecycleModel()
	p.RelevanceWeight, p.ImportanceWeight, p.RecencyWeight = 1, 0, 0
	p.CoreBoost, p.ValidatedBoost, p.DraftBoost = 1, 1, 1
	return &p
}

// arm is one variant's run over a dataset.
type arm struct {
	build buildStats
	lat   latencies                // first pass, by tier
	took  map[string]time.Duration // first pass, by question
}

// buildVariants builds one tree per variant from the same groups, each
// engine opened with its variant's mechanisms off: vs[0], Arbor as it is,
// and the variants whose mechanism acts at indexing curate theirs; the
// others open a copy of vs[0]'s.
func buildVariants(vs []variant, groups [][]unit, arms map[string]*arm) ([]*arborTree, error) {
	trees := make([]*arborTree, 0, len(vs))
	for i, v := range vs {
		prev := ablation.SwitchOff(v.off)
		var t *arborTree
		var st buildStats
		var err error
		if i == 0 || v.indexing {
			t, st, err = buildArbor(groups, v.lifecycle)
		} else {
			t, err = trees[0].copy(v.lifecycle)
		}
		ablation.SwitchOff(prev)
		if err != nil {
			for _, t := range trees {
				t.close()
			}
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		arms[v.name].build.add(st)
		trees = append(trees, t)
	}
	return trees, nil
}

// newArms makes an arm for every variant.
func newArms(vs []variant) map[string]*arm {
	arms := make(map[string]*arm, len(vs))
	for _, v := range vs {
		arms[v.name] = &arm{lat: latencies{}, took: map[string]time.Duration{}}
	}
	return arms
}

// askVariants asks one question (key, text) of every variant's tree. The
// variant asked first rotates with turn, so that none is always the one
// that warms the caches; each answer's latency is recorded in its arm.
func askVariants(vs []variant, trees []*arborTree, arms map[string]*arm, key, text string, limit, turn int) ([][]unit, []queryInfo, []error) {
	res := make([][]unit, len(vs))
	infos := make([]queryInfo, len(vs))
	errs := make([]error, len(vs))
	for j := range vs {
		i := (j + turn) % len(vs)
		a := arms[vs[i].name]
		res[i], infos[i], errs[i] = trees[i].ask(text, limit, a.lat)
		if errs[i] == nil {
			a.took[key] = infos[i].Took
		}
	}
	return res, infos, errs
}
