package engine

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/lifecycle"
)

// countingFS counts the writes of state.json.
type countingFS struct {
	*host.MemFS
	stateWrites int
}

func (c *countingFS) WriteFile(p string, data []byte) error {
	if p == catalog.StatePath {
		c.stateWrites++
	}
	return c.MemFS.WriteFile(p, data)
}

// clock is a test clock that moves when told.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

var day0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

const retryPath = "engineering/billing/invoice_retry_policy.md"

// unrelatedEntry keeps billing terms rare, so that the billing question is
// answered directly.
const unrelatedEntry = `---
title: Lisbon Restaurants
---

## Narrative
Book Taberna da Rua das Flores for the first evening.
`

func newFS(t *testing.T, files map[string]string) *countingFS {
	t.Helper()
	fs := &countingFS{MemFS: host.NewMemFS()}
	if files != nil {
		files["personal/travel/lisbon_restaurants.md"] = unrelatedEntry
	}
	for p, c := range files {
		if err := fs.MemFS.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

func openEngine(t testing.TB, fs host.FS, c host.Clock, opts Options) (*Engine, api.OpenResult) {
	t.Helper()
	opts.FS, opts.Clock = fs, c
	e, res, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, res
}

// stateFile is the JSON of catalog.StatePath.
type stateFile struct {
	Version int                         `json:"version"`
	Entries map[string]lifecycle.Signal `json:"entries"`
}

func readState(t *testing.T, fs host.FS) stateFile {
	t.Helper()
	data, err := fs.ReadFile(catalog.StatePath)
	if err != nil {
		t.Fatalf("read %s: %v", catalog.StatePath, err)
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%s: %v", catalog.StatePath, err)
	}
	return st
}

// directQuery asks a question the billing entry answers directly.
func directQuery(t *testing.T, e *Engine, q string) api.QueryResult {
	t.Helper()
	res, err := e.Query(api.SearchParams{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsLLM || res.OutOfDomain || len(res.Results) == 0 || res.Results[0].Path != retryPath {
		t.Fatalf("query %q: want a direct answer from %s, got %+v", q, retryPath, res)
	}
	return res
}

func TestAccessesAreBatchedAndFlushed(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry, "engineering/billing/dunning_emails.md": linkingEntry})
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	for range 10 {
		directQuery(t, e, "how many times are failed invoices retried")
	}
	if _, err := e.Read(api.ReadParams{Path: retryPath}); err != nil {
		t.Fatal(err)
	}
	// search never counts an access.
	if _, err := e.Search(api.SearchParams{Query: "dunning emails"}); err != nil {
		t.Fatal(err)
	}
	if fs.stateWrites != 0 {
		t.Fatalf("%d writes of state.json before any flush, want 0 (batched)", fs.stateWrites)
	}
	res, err := e.Flush()
	if err != nil || !res.Written || res.Entries != 1 {
		t.Fatalf("flush = %+v, %v; want written, 1 entry", res, err)
	}
	if fs.stateWrites != 1 {
		t.Fatalf("%d writes after 11 accesses and a flush, want 1", fs.stateWrites)
	}
	st := readState(t, fs)
	s := st.Entries[retryPath]
	if st.Version != 1 || s.Accesses != 11 || s.Importance != 50+11*3 || s.Maturity != api.MaturityValidated {
		t.Fatalf("state = %+v, want 11 accesses, importance 83, validated", st)
	}
	if _, ok := st.Entries["engineering/billing/dunning_emails.md"]; ok {
		t.Fatal("an entry that was only searched has a signal")
	}
	// Nothing changed since: flush writes nothing, and neither does close.
	if res, _ := e.Flush(); res.Written {
		t.Fatal("a second flush wrote again")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if fs.stateWrites != 1 {
		t.Fatalf("%d writes, want still 1", fs.stateWrites)
	}
}

func TestListedResultsAreNotAccesses(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry, "engineering/billing/dunning_emails.md": linkingEntry})
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	// Both entries state "failed" and "retry" themselves: no direct answer.
	res, err := e.Query(api.SearchParams{Query: "failed retry"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsLLM || len(res.Results) < 2 {
		t.Fatalf("query failed retry: want a list without a direct answer, got %+v", res)
	}
	if f, _ := e.Flush(); f.Written || f.Entries != 0 {
		t.Fatalf("flush after a listed result = %+v, want nothing to write", f)
	}
}

func TestFlushEveryNAccessesAndAfterAnInterval(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry})
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{FlushAfter: 3, FlushInterval: 10 * time.Minute})
	for range 7 {
		directQuery(t, e, "how many times are failed invoices retried")
	}
	if fs.stateWrites != 2 {
		t.Fatalf("7 accesses with flushAfter 3: %d writes, want 2", fs.stateWrites)
	}
	// One access pending; the interval passes; the next call writes.
	c.now = c.now.Add(11 * time.Minute)
	directQuery(t, e, "how many times are failed invoices retried")
	if fs.stateWrites != 3 {
		t.Fatalf("after the interval: %d writes, want 3", fs.stateWrites)
	}
	if got := readState(t, fs).Entries[retryPath].Accesses; got != 8 {
		t.Fatalf("state holds %d accesses, want 8", got)
	}
}

func TestSessionFlushAndReopenKeepImportance(t *testing.T) {
	s, fs := newSession(t, map[string]string{retryPath: billingEntry})
	mustOpen(t, s)
	for range 5 {
		if _, errObj := call(t, s, "read", map[string]any{"path": retryPath}); errObj != nil {
			t.Fatal(errObj)
		}
	}
	res, errObj := call(t, s, "flush", nil)
	if errObj != nil || res["written"] != true || res["entries"].(float64) != 1 {
		t.Fatalf("flush = %v, %v", res, errObj)
	}
	if _, errObj := call(t, s, "close", nil); errObj != nil {
		t.Fatal(errObj)
	}
	if _, err := fs.ReadFile(catalog.StatePath); err != nil {
		t.Fatalf("no state after flush: %v", err)
	}
	s2 := NewSession(fs, nil)
	mustOpen(t, s2)
	st, _ := call(t, s2, "stats", nil)
	if m := st["maturity"].(map[string]any); m["validated"].(float64) != 1 || m["draft"].(float64) != 0 || m["core"].(float64) != 0 {
		t.Fatalf("stats maturity after reopen = %v, want the entry validated (ι 65)", m)
	}
	q, _ := call(t, s2, "query", map[string]any{"query": "how many times are failed invoices retried"})
	lc := q["results"].([]any)[0].(map[string]any)["lifecycle"].(map[string]any)
	if lc["importance"].(float64) != 65 || lc["maturity"] != "validated" {
		t.Fatalf("lifecycle of the top hit after reopen = %v, want importance 65, validated", lc)
	}
}

func TestCloseFlushes(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry})
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	directQuery(t, e, "how many times are failed invoices retried")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if fs.stateWrites != 1 || readState(t, fs).Entries[retryPath].Accesses != 1 {
		t.Fatalf("close: %d writes, want 1 holding the access", fs.stateWrites)
	}
}

func TestCorruptStateStartsFresh(t *testing.T) {
	for name, content := range map[string]string{
		"not json":       `{"version":1,"entries":{`,
		"future version": `{"version":99,"entries":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			fs := newFS(t, map[string]string{retryPath: billingEntry, catalog.StatePath: content})
			e, res := openEngine(t, fs, host.FixedClock(day0), Options{})
			if len(res.Warnings) != 1 || res.Warnings[0].Path != catalog.StatePath || !strings.Contains(res.Warnings[0].Message, "start fresh") {
				t.Fatalf("open warnings = %+v, want one about %s", res.Warnings, catalog.StatePath)
			}
			if backup, err := fs.ReadFile(".arbor/state.corrupt.json"); err != nil || string(backup) != content {
				t.Fatalf("backup = %q, %v; want the old bytes", backup, err)
			}
			hit := directQuery(t, e, "how many times are failed invoices retried")
			if hit.Results[0].Lifecycle.Importance != 50 {
				t.Fatalf("fresh importance = %v, want 50", hit.Results[0].Lifecycle)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if st := readState(t, fs); st.Version != 1 || st.Entries[retryPath].Accesses != 1 {
				t.Fatalf("state after close = %+v", st)
			}
		})
	}
}

func TestInvalidSignalsAndVanishedEntriesAreDropped(t *testing.T) {
	state := `{"version":1,"entries":{
 "engineering/billing/invoice_retry_policy.md":{"importance":70,"maturity":"validated","accesses":7,"updates":0,"lastActivity":"2026-03-01T00:00:00Z"},
 "engineering/billing/gone.md":{"importance":90,"maturity":"core","accesses":20,"updates":0,"lastActivity":"2026-03-01T00:00:00Z"},
 "engineering/billing/dunning_emails.md":{"importance":500,"maturity":"legendary","accesses":1,"updates":0,"lastActivity":"2026-03-01T00:00:00Z"}}}`
	fs := newFS(t, map[string]string{retryPath: billingEntry, "engineering/billing/dunning_emails.md": linkingEntry, catalog.StatePath: state})
	e, res := openEngine(t, fs, host.FixedClock(day0), Options{})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "1 entry with invalid signals") {
		t.Fatalf("warnings = %+v", res.Warnings)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	st := readState(t, fs)
	if len(st.Entries) != 1 || st.Entries[retryPath].Importance != 70 {
		t.Fatalf("state = %+v, want only the valid, present entry", st)
	}
}

func curateOps(t *testing.T, e *Engine, ops ...map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"operations": ops})
	var p api.CurateParams
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	res := e.Curate(p)
	if res.Summary.Failed != 0 {
		t.Fatalf("curate: %+v", res)
	}
}

func TestCurateSignals(t *testing.T) {
	const (
		pager  = "ops/pager/pager_rotation.md"
		oncall = "ops/pager/on_call_handbook.md"
	)
	fs := newFS(t, nil)
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	add := func(path, title, text string) map[string]any {
		return map[string]any{"type": "ADD", "path": path, "title": title, "reason": "test", "content": map[string]any{"narrative": text}}
	}
	curateOps(t, e,
		add("ops/pager", "Pager Rotation", "The pager rotates weekly on Mondays."),
		add("ops/pager", "On-Call Handbook", "The handbook lists escalation contacts."))
	if s := e.signals.Of(pager); s.Importance != 50 || !s.LastActivity.Equal(day0) {
		t.Fatalf("after ADD: %+v, want 50 recorded now", s)
	}
	for range 10 {
		if _, err := e.Read(api.ReadParams{Path: pager}); err != nil {
			t.Fatal(err)
		}
	}
	c.now = day0.AddDate(0, 0, 2)
	curateOps(t, e, map[string]any{"type": "UPDATE", "path": pager, "reason": "test", "content": map[string]any{"narrative": "It rotates on Tuesdays now."}})
	want := 80*math.Pow(0.995, 2) + 5
	if s := e.signals.Of(pager); math.Abs(s.Importance-want) > 1e-9 || s.Updates != 1 || s.Accesses != 10 {
		t.Fatalf("after 10 reads and an UPDATE two days later: %+v, want importance %.4f", s, want)
	}
	curateOps(t, e, map[string]any{"type": "UPSERT", "path": "ops/pager", "title": "On-Call Handbook", "reason": "test", "content": map[string]any{"narrative": "Secondary after ten minutes."}})
	if s, want := e.signals.Of(oncall), 50*math.Pow(0.995, 2)+5; math.Abs(s.Importance-want) > 1e-9 || s.Updates != 1 {
		t.Fatalf("after UPSERT of an existing entry two days after its ADD: %+v, want %.4f", s, want)
	}
	// MERGE the valued pager entry into the handbook: the handbook carries its importance and counts.
	curateOps(t, e, map[string]any{"type": "MERGE", "path": pager, "mergeTarget": oncall, "reason": "test"})
	if _, err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, ok := readState(t, fs).Entries[pager]; ok {
		t.Fatal("the merge source kept its signal")
	}
	s := e.signals.Of(oncall)
	if math.Abs(s.Importance-(want+5)) > 1e-9 || s.Accesses != 10 || s.Updates != 3 || s.Maturity != api.MaturityCore {
		t.Fatalf("merge target: %+v, want importance %.4f (the source's, plus an update), 10 accesses, 3 updates, core", s, want+5)
	}
	// A new entry at the source's old path starts fresh.
	curateOps(t, e, add("ops/pager", "Pager Rotation", "A new rotation."))
	if s := e.signals.Of(pager); s.Importance != 50 || s.Accesses != 0 {
		t.Fatalf("re-added path: %+v, want fresh", s)
	}
	// DELETE of a folder drops every signal under it.
	curateOps(t, e, map[string]any{"type": "DELETE", "path": "ops/pager", "reason": "test"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if st := readState(t, fs); len(st.Entries) != 0 {
		t.Fatalf("state after deleting the folder = %+v, want empty", st.Entries)
	}
}

func TestDecayAndRecencyOverDays(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry})
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	for range 12 {
		if _, err := e.Read(api.ReadParams{Path: retryPath}); err != nil {
			t.Fatal(err)
		}
	}
	// ι 86: core. The entry's updatedAt is 2026-01-12T09:00, 47.625 days before day0.
	age := day0.Sub(time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)).Hours() / 24
	hit := directQuery(t, e, "how many times are failed invoices retried").Results[0]
	lc := hit.Lifecycle
	if lc.Importance != 86 || lc.Maturity != api.MaturityCore || lc.Recency != round4(math.Exp(-age/30)) {
		t.Fatalf("lifecycle at day 0 = %+v, want 86, core, recency e^(-%g/30)", lc, age)
	}
	// The top hit's relevance is 1: its raw score relative to the best.
	if want := round4((0.6*1 + 0.2*0.86 + 0.2*math.Exp(-age/30)) * 1.15); lc.Score != want {
		t.Fatalf("compound score = %v, want %v", lc.Score, want)
	}
	// 60 quiet days later (the query's own access was the last activity at ι 89).
	c.now = day0.AddDate(0, 0, 60)
	lc = directQuery(t, e, "how many times are failed invoices retried").Results[0].Lifecycle
	if want := round4(89 * math.Pow(0.995, 60)); lc.Importance != want || lc.Maturity != api.MaturityCore {
		t.Fatalf("after 60 days = %+v, want importance %v, still core (demotion below 60)", lc, want)
	}
	if want := round4(math.Exp(-(age + 60) / 30)); lc.Recency != want {
		t.Fatalf("recency 60 days later = %v, want %v", lc.Recency, want)
	}
}

// Two entries equally relevant: search keeps the index order, query puts
// the one the lifecycle values first.
func TestQueryOrdersByCompoundScore(t *testing.T) {
	const alpha, beta = "notes/misc/alpha.md", "notes/misc/beta.md"
	body := "---\ntitle: %s\nupdatedAt: 2026-02-20T00:00:00Z\n---\n\nThe quarterly offsite venue shortlist covers three lakeside hotels.\n"
	fs := newFS(t, map[string]string{
		alpha: strings.Replace(body, "%s", "Alpha", 1),
		beta:  strings.Replace(body, "%s", "Beta", 1),
	})
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	order := func(hitsPaths []string) string { return strings.Join(hitsPaths, ",") }
	paths := func(r api.QueryResult) []string {
		var out []string
		for _, h := range r.Results {
			out = append(out, h.Path)
		}
		return out
	}
	q, err := e.Query(api.SearchParams{Query: "offsite venue shortlist"})
	if err != nil {
		t.Fatal(err)
	}
	if !q.NeedsLLM || order(paths(q)) != alpha+","+beta {
		t.Fatalf("before any access: %s (tier %s), want alpha first, no direct answer", order(paths(q)), q.TierName)
	}
	for range 12 {
		if _, err := e.Read(api.ReadParams{Path: beta}); err != nil {
			t.Fatal(err)
		}
	}
	q, _ = e.Query(api.SearchParams{Query: "offsite venue shortlist"}) // tier 0: re-ranked on use
	if q.Tier != api.TierExactCache || order(paths(q)) != beta+","+alpha {
		t.Fatalf("after 12 reads of beta: %s (tier %d), want beta first", order(paths(q)), q.Tier)
	}
	if q.Results[0].Lifecycle.Maturity != api.MaturityCore || q.Results[0].Score != q.Results[1].Score {
		t.Fatalf("results = %+v", q.Results)
	}
	s, _ := e.Search(api.SearchParams{Query: "offsite venue shortlist"})
	if s.Results[0].Path != alpha || s.Results[0].Lifecycle != nil {
		t.Fatalf("search = %+v, want index order and no lifecycle", s.Results)
	}
}

func TestFuzzyCacheInEngine(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry})
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	first := directQuery(t, e, "how many times are failed invoices retried")
	if first.Tier != api.TierDirect {
		t.Fatalf("first query tier %d", first.Tier)
	}
	// {failed, invoices, many, retried, times} vs {escalated, failed, invoices, retried}: 3/6, a miss.
	fz := directQuery(t, e, "are failed invoices retried and escalated")
	// The same four words as the second query: Jaccard 1 with it.
	fz2 := directQuery(t, e, "escalated, failed invoices are retried")
	if fz.Tier != api.TierDirect || fz2.Tier != api.TierFuzzyCache || fz2.TierName != "fuzzy-cache" {
		t.Fatalf("tiers %d, %d; want 2 then 1 (the second query is cached, the third is close to it)", fz.Tier, fz2.Tier)
	}
	if !strings.Contains(fz2.Reason, "Jaccard 1.00") {
		t.Fatalf("reason %q", fz2.Reason)
	}
	if s := e.signals.Of(retryPath); s.Accesses != 3 {
		t.Fatalf("accesses = %d, want 3 (a fuzzy hit is a direct answer too)", s.Accesses)
	}
	// Jaccard 4/6 with the first query, but "payouts" is a word its answer
	// lacks: another question, searched again, and not answered with the
	// invoice entry (the entry holds two of its three terms, so it is not
	// out of domain either: docs/ABI.md §4.4).
	if r, err := e.Query(api.SearchParams{Query: "how many times are failed payouts retried"}); err != nil || r.Tier != api.TierDirect || r.TierName == "direct" {
		t.Fatalf("a word the answer lacks: %+v, %v; want it searched again, with no direct answer", r, err)
	}
	// Any write to the tree drops the cache.
	curateOps(t, e, map[string]any{"type": "ADD", "path": "ops/pager", "title": "Pager", "reason": "test", "content": map[string]any{"narrative": "weekly"}})
	if r := directQuery(t, e, "escalated, failed invoices are retried"); r.Tier != api.TierDirect {
		t.Fatalf("after a curate: tier %d, want 2", r.Tier)
	}
}

func TestLifecycleOpenParams(t *testing.T) {
	s, _ := newSession(t, map[string]string{retryPath: billingEntry})
	_, errObj := call(t, s, "open", map[string]any{"lifecycle": map[string]any{"dailyDecay": 2}})
	if errObj == nil || errObj["code"] != api.CodeInvalidParams || !strings.Contains(errObj["message"].(string), "dailyDecay") {
		t.Fatalf("dailyDecay 2: %v", errObj)
	}
	_, errObj = call(t, s, "open", map[string]any{"lifecycle": map[string]any{"flushAfter": 0}})
	if errObj == nil || errObj["code"] != api.CodeInvalidParams {
		t.Fatalf("flushAfter 0: %v", errObj)
	}
	// Relevance alone: the compound score is the raw score relative to the
	// best hit's, 1 for the top hit; other fields keep their defaults.
	if _, errObj := call(t, s, "open", map[string]any{"fixedTime": "2026-03-01T00:00:00Z",
		"lifecycle": map[string]any{"relevanceWeight": 1, "importanceWeight": 0, "recencyWeight": 0, "draftBoost": 1}}); errObj != nil {
		t.Fatal(errObj)
	}
	q, _ := call(t, s, "query", map[string]any{"query": "how many times are failed invoices retried"})
	h := q["results"].([]any)[0].(map[string]any)
	if h["lifecycle"].(map[string]any)["score"] != 1.0 || h["lifecycle"].(map[string]any)["importance"].(float64) != 50 {
		t.Fatalf("relevance-only hit = %v", h)
	}
}

// The lifecycle orders every entry a query returns, whatever number of
// the query's terms each holds: with recency weighing most, the recent
// entry matching some terms comes before the older one matching them all.
func TestLifecycleOrdersEveryEntry(t *testing.T) {
	recent := "---\ntitle: Invoice Export\nupdatedAt: 2026-02-28T09:00:00Z\n---\n\n## Narrative\nInvoices are exported nightly as CSV.\n"
	s, _ := newSession(t, map[string]string{retryPath: billingEntry, "engineering/billing/invoice_export.md": recent})
	if _, errObj := call(t, s, "open", map[string]any{"fixedTime": "2026-03-01T00:00:00Z",
		"lifecycle": map[string]any{"relevanceWeight": 0.1, "importanceWeight": 0, "recencyWeight": 0.9}}); errObj != nil {
		t.Fatal(errObj)
	}
	// "quarterly" occurs nowhere: no direct answer pins the full match
	// first (docs/ABI.md §4.4), so the lifecycle orders both.
	q, _ := call(t, s, "query", map[string]any{"query": "invoice escalated billing lead quarterly"})
	var paths []string
	var scores []float64
	for _, r := range q["results"].([]any) {
		h := r.(map[string]any)
		paths = append(paths, h["path"].(string))
		scores = append(scores, h["lifecycle"].(map[string]any)["score"].(float64))
	}
	if len(paths) != 2 || paths[0] != "engineering/billing/invoice_export.md" || scores[1] >= scores[0] {
		t.Fatalf("results %v with compound scores %v: want the recent export first, by its higher compound score", paths, scores)
	}
}

// An older tree's lifecycle keys in front matter (docs/format.md) are the
// initial signal of an entry state.json knows nothing of; values out of
// range are not trusted, and reading rewrites no entry.
func TestLegacyFrontMatterSeedsSignals(t *testing.T) {
	const (
		valued = "ops/pager/pager_rotation.md"
		odd    = "ops/pager/on_call_handbook.md"
	)
	files := map[string]string{
		valued: "---\ntitle: Pager Rotation\nimportance: 88\nmaturity: core\naccessCount: 7\nupdateCount: \"2\"\nrecency: 0.9\n---\n\n## Narrative\nThe pager rotates weekly.\n",
		odd:    "---\ntitle: On-Call Handbook\nimportance: 150\nmaturity: legendary\naccessCount: -4\n---\n\n## Narrative\nEscalation contacts.\n",
	}
	fs := newFS(t, files)
	before, _ := fs.ReadFile(valued)
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	if s := e.signals.Of(valued); s.Importance != 88 || s.Maturity != api.MaturityCore || s.Accesses != 7 || s.Updates != 2 {
		t.Fatalf("seeded signal = %+v, want importance 88, core, 7 accesses, 2 updates", s)
	}
	if s := e.signals.Of(odd); s.Importance != 50 || s.Maturity != api.MaturityDraft || s.Accesses != 0 {
		t.Fatalf("out-of-range keys were trusted: %+v", s)
	}
	if _, err := e.Read(api.ReadParams{Path: valued}); err != nil {
		t.Fatal(err)
	}
	if s := e.signals.Of(valued); s.Importance != 91 || s.Accesses != 8 {
		t.Fatalf("an access after the seed = %+v, want importance 91 and 8 accesses", s)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := fs.ReadFile(valued); string(after) != string(before) {
		t.Fatalf("reading rewrote the entry:\n%s", after)
	}
	if st := readState(t, fs); st.Entries[valued].Importance != 91 {
		t.Fatalf("state.json = %+v", st.Entries)
	}
}

// round4 rounds as a query's lifecycle figures are rounded.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// TestSignalsExchange: a reader open read-only on the writer's root counts
// accesses only once the exchange has begun; the writer counts them as its
// own, persists them, and hands the signals back, which the reader then
// ranks with.
func TestSignalsExchange(t *testing.T) {
	fs := newFS(t, map[string]string{retryPath: billingEntry, "engineering/billing/dunning_emails.md": linkingEntry})
	writer, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	reader, _ := openEngine(t, fs, host.FixedClock(day0), Options{ReadOnly: true})
	directQuery(t, reader, "how many times are failed invoices retried") // before the books open: not handed over
	if res, err := reader.Signals(api.SignalsParams{}); err != nil || len(res.Accessed) != 0 || len(res.Changed) != 0 {
		t.Fatalf("first exchange = %+v, %v; want nothing counted before it", res, err)
	}
	if _, err := writer.Signals(api.SignalsParams{}); err != nil {
		t.Fatal(err)
	}
	directQuery(t, reader, "how many times are failed invoices retried")
	if _, err := reader.Read(api.ReadParams{Path: retryPath}); err != nil {
		t.Fatal(err)
	}
	got, err := reader.Signals(api.SignalsParams{})
	if err != nil || len(got.Accessed) != 1 || got.Accessed[retryPath] != 2 {
		t.Fatalf("reader's exchange = %+v, %v; want 2 accesses of %s", got, err, retryPath)
	}
	if again, _ := reader.Signals(api.SignalsParams{}); len(again.Accessed) != 0 || len(again.Changed) != 0 {
		t.Fatalf("second exchange = %+v; want what the first took forgotten", again)
	}
	w, err := writer.Signals(api.SignalsParams{Accessed: got.Accessed})
	if err != nil || len(w.Accessed) != 0 {
		t.Fatalf("writer's exchange = %+v, %v; want the handed accesses counted, not handed back", w, err)
	}
	sig := w.Changed[retryPath]
	if sig == nil || sig.Accesses != 2 || sig.Importance != 56 {
		t.Fatalf("writer's changed signal = %+v; want 2 accesses, importance 56", sig)
	}
	if _, err := writer.Flush(); err != nil {
		t.Fatal(err)
	}
	if s := readState(t, fs).Entries[retryPath]; s.Accesses != 2 {
		t.Fatalf("state.json holds %+v, want the reader's 2 accesses", s)
	}
	if _, err := reader.Signals(api.SignalsParams{Set: w.Changed}); err != nil {
		t.Fatal(err)
	}
	res, err := reader.Query(api.SearchParams{Query: "invoice retry", Filters: api.Filters{Sort: api.SortImportance}})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != retryPath || res.Results[0].Lifecycle == nil || res.Results[0].Lifecycle.Importance != 56 {
		t.Fatalf("reader's search after the set = %+v, %v; want importance 56 for %s", res, err, retryPath)
	}
	// A bad signal changes nothing.
	if _, err := reader.Signals(api.SignalsParams{}); err != nil { // the query's own access
		t.Fatal(err)
	}
	_, err = reader.Signals(api.SignalsParams{Set: map[string]*api.Signal{retryPath: {Importance: 500, Maturity: api.MaturityCore}}, Accessed: map[string]int{retryPath: 1}})
	if e := (*api.Error)(nil); !errors.As(err, &e) || e.Code != api.CodeInvalidParams {
		t.Fatalf("set of importance 500: %v, want invalid_params", err)
	}
	if again, _ := reader.Signals(api.SignalsParams{}); len(again.Accessed) != 0 {
		t.Fatalf("a refused exchange counted %+v", again.Accessed)
	}
}
