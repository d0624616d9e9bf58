package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
)

// benchClock is the engine's clock during a run: set to each session's date
// while its entries are curated (so createdAt is when it was said), then to
// the time the questions are asked.
type benchClock struct{ t time.Time }

func (c *benchClock) Now() time.Time { return c.t }

// buildStats measures tree building through Curate.
type buildStats struct {
	Entries   int
	SrcBytes  int64 // bytes of unit text handed to curate (title, provenance, body)
	FileBytes int64 // bytes of markdown the engine wrote (entries and context.md)
	Dur       time.Duration
	Failed    int
	Trees     int
}

func (b *buildStats) add(o buildStats) {
	b.Entries += o.Entries
	b.SrcBytes += o.SrcBytes
	b.FileBytes += o.FileBytes
	b.Dur += o.Dur
	b.Failed += o.Failed
	b.Trees += o.Trees
}

func (b buildStats) entriesPerSec() float64 { return float64(b.Entries) / b.Dur.Seconds() }
func (b buildStats) mbPerSec() float64      { return float64(b.SrcBytes) / 1e6 / b.Dur.Seconds() }

// queryInfo is what the harness keeps of one Arbor answer.
type queryInfo struct {
	Tier     int
	TierName string
	OOD      bool
	N        int      // results returned
	Contexts int      // context.md files among them
	Top      []string // "path (ŝ)" of the first results
	Reason   string
	Took     time.Duration `json:"-"`
}

// latencies groups query durations by "tier name".
type latencies map[string][]time.Duration

func (l latencies) add(tier int, name string, d time.Duration) {
	k := fmt.Sprintf("%d %s", tier, name)
	l[k] = append(l[k], d)
}

func (l latencies) merge(o latencies) {
	for k, v := range o {
		l[k] = append(l[k], v...)
	}
}

func (l latencies) keys() []string {
	ks := make([]string, 0, len(l))
	for k := range l {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// arborTree is one open engine over a benchmark tree.
type arborTree struct {
	eng *engine.Engine
	// byRelevance is a second engine on the tree, opened for the pool
	// (-dump-pool), whose lifecycle orders by relevance alone.
	byRelevance *engine.Engine
	fs          *host.MemFS
	clock       *benchClock
	units       map[string]unit // by path
}

// poolDepth is the -dump-pool flag: when > 0, every question is also asked
// for that many matches, kept in the dump in pool order (see pool).
var poolDepth int

// buildArbor opens an empty memory with the lifecycle model lc (nil: the
// defaults) and curates units into it, one Curate call per group (a
// session), the clock set to the group's time.
func buildArbor(groups [][]unit, lc *api.LifecycleModel) (*arborTree, buildStats, error) {
	var st buildStats
	t := &arborTree{fs: host.NewMemFS(), clock: &benchClock{}, units: map[string]unit{}}
	start := time.Now()
	eng, _, err := engine.Open(engine.Options{FS: t.fs, Clock: t.clock, Lifecycle: lc})
	if err != nil {
		return nil, st, err
	}
	t.eng = eng
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		ops := make([]api.Operation, 0, len(g))
		for _, u := range g {
			ops = append(ops, u.operation())
			t.units[u.Path] = u
			st.SrcBytes += int64(len(u.Title) + len(u.Task) + len(u.Author) + len(u.Flow) + len(u.Body))
		}
		if !g[0].Time.IsZero() {
			t.clock.t = g[0].Time
		}
		res := eng.Curate(api.CurateParams{Operations: ops})
		for _, a := range res.Applied {
			if a.Status != "success" {
				st.Failed++
				if st.Failed <= 3 {
					fmt.Fprintf(os.Stderr, "  curate %s failed: %s\n", a.Path, a.Message)
				}
			}
		}
		st.Entries += res.Summary.Added
	}
	st.Dur = time.Since(start)
	st.Trees = 1
	for p, data := range t.fs.Files() {
		if strings.HasSuffix(p, ".md") {
			st.FileBytes += int64(len(data))
		}
	}
	return t, st, nil
}

// ask runs one question through Query and returns the ranked entry paths
// (a context.md or unknown path keeps its slot as "").
func (t *arborTree) ask(q string, limit int, lat latencies) ([]unit, queryInfo, error) {
	start := time.Now()
	res, err := t.eng.Query(api.SearchParams{Query: q, Limit: limit})
	d := time.Since(start)
	if err != nil {
		return nil, queryInfo{}, err
	}
	lat.add(res.Tier, res.TierName, d)
	info := queryInfo{Tier: res.Tier, TierName: res.TierName, OOD: res.OutOfDomain, N: len(res.Results), Reason: res.Reason, Took: d}
	out := make([]unit, len(res.Results))
	for i, h := range res.Results {
		u, ok := t.unit(h.Path)
		if !ok {
			info.Contexts++
		}
		out[i] = u
		if i < 3 {
			info.Top = append(info.Top, fmt.Sprintf("%s (%.3f)", h.Path, h.Score))
		}
	}
	return out, info, nil
}

// copy opens a second engine, with the lifecycle model lc, on a copy of
// the tree as t's engine has written it (index and catalog flushed), so
// that it reuses the index rather than analyse the entries again.
func (t *arborTree) copy(lc *api.LifecycleModel) (*arborTree, error) {
	if _, err := t.eng.Flush(); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	fs := host.NewMemFS()
	for p, data := range t.fs.Files() {
		if err := fs.WriteFile(p, data); err != nil {
			return nil, fmt.Errorf("copy %s: %w", p, err)
		}
	}
	c := &arborTree{fs: fs, clock: &benchClock{t.clock.t}, units: t.units}
	eng, _, err := engine.Open(engine.Options{FS: fs, Clock: c.clock, Lifecycle: lc})
	if err != nil {
		return nil, err
	}
	c.eng = eng
	return c, nil
}

// pool asks q for its n best matches and returns them in the order the
// evidence rules leave them, the order Query cuts at its limit: by raw
// score, entries before contexts (the lifecycle orders only what is kept,
// so asking with limit n is not the first n of a larger limit). It is for
// tuning: which gold turns sit just below the cut. The order is that of an
// engine whose lifecycle weighs relevance (raw score over the best) alone,
// which then orders by raw score.
func (t *arborTree) pool(q string, n int) ([]unit, error) {
	if t.byRelevance == nil {
		eng, _, err := engine.Open(engine.Options{FS: t.fs, Clock: t.clock, Lifecycle: relevanceOnly()})
		if err != nil {
			return nil, err
		}
		t.byRelevance = eng
	}
	res, err := t.byRelevance.Query(api.SearchParams{Query: q, Limit: n})
	if err != nil {
		return nil, err
	}
	out := make([]unit, len(res.Results))
	for i, h := range res.Results {
		out[i], _ = t.unit(h.Path)
	}
	return out, nil
}

// unit is the unit an answer's path holds; a context.md or unknown path
// keeps its slot as a unit of no session (ok false).
func (t *arborTree) unit(path string) (unit, bool) {
	if u, ok := t.units[path]; ok {
		return u, true
	}
	return unit{Path: path, Session: -1}, false
}

func (t *arborTree) close() {
	for _, eng := range []*engine.Engine{t.eng, t.byRelevance} {
		if eng == nil {
			continue
		}
		if err := eng.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "close: %v\n", err)
		}
	}
}
