package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// The invoice policy, its near-copy (one sentence reworded, one fact
// added) and an entry on the same subject that is no copy.
const (
	policyPath = "ops/billing/invoice_policy.md"
	copyPath   = "ops/billing/invoice_policy_copy.md"
	otherPath  = "ops/billing/refund_policy.md"
	linkerPath = "ops/billing/dunning.md"
)

var policyText = []string{
	"Failed invoices are retried three times over six days.",
	"After the third failure the account is escalated to the collections team.",
	"Customers get an email before each retry with a link to update their card.",
	"The retry interval is two days and never falls on a weekend.",
	"Invoices under five euros are written off instead of retried.",
	"Enterprise customers are called by their account manager before escalation.",
	"Every retry is logged in the billing audit table with its outcome.",
	"Refunds of retried invoices go back to the original card.",
	"Disputed invoices are paused and never retried until the dispute closes.",
	"The finance lead reviews the list of escalated accounts every Monday morning.",
	"Retry emails are sent in the customer's own language when we know it.",
	"A card that expired is not retried; the customer is asked for a new one instead.",
	"Annual plans get one extra retry because their invoices are larger.",
	"Taxes are recomputed on each retry in case the customer's address changed.",
}

func policyEntry(title string, sentences []string, facts ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntitle: %s\ntags: [billing]\ncreatedAt: 2026-01-05T00:00:00Z\nupdatedAt: 2026-02-20T00:00:00Z\n---\n\n## Narrative\n%s\n", title, strings.Join(sentences, " "))
	if len(facts) > 0 {
		b.WriteString("\n## Facts\n")
		for _, f := range facts {
			b.WriteString("- " + f + "\n")
		}
	}
	return b.String()
}

func tidyTree(t *testing.T) *countingFS { return newFS(t, tidyFiles()) }

// tidyFiles are the entries of tidyTree.
func tidyFiles() map[string]string {
	reworded := slices.Clone(policyText)
	reworded[3] = "Retries are two days apart and skip weekends."
	return map[string]string{
		policyPath: policyEntry("Invoice policy", policyText, "retries: three", "escalation: collections team"),
		copyPath:   policyEntry("Invoice policy", reworded, "retries: three", "escalation: collections team", "write-off: under five euros"),
		otherPath: policyEntry("Refund policy", []string{
			"Refunds are issued to the original card within five days.",
			"Refunds of retried invoices go back to the original card.",
			"Partial refunds need a manager's approval.",
		}),
		linkerPath: "---\ntitle: Dunning\nrelated: [" + copyPath + "]\n---\n\n## Narrative\nDunning emails follow the invoice policy.\n",
	}
}

func runTidy(t *testing.T, e *Engine, p api.TidyParams) api.TidyResult {
	t.Helper()
	res, err := e.Tidy(p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTidyMergesPlantedDuplicates: the copy is found and only it, the
// merge keeps one text with the reworded sentence marked and the added
// fact, and after a reopen the query finds the merged entry, the copy is
// gone and the link that named it names the merged entry.
func TestTidyMergesPlantedDuplicates(t *testing.T) {
	fs := tidyTree(t)
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	plan := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}})
	if len(plan.Suggestions) != 1 || plan.Counts[api.TidyMerge] != 1 {
		t.Fatalf("plan = %+v", plan)
	}
	s := plan.Suggestions[0]
	if !slices.Equal(s.Paths, []string{copyPath, policyPath}) && !slices.Equal(s.Paths, []string{policyPath, copyPath}) {
		t.Fatalf("paths = %v", s.Paths)
	}
	if s.Similarity < 0.8 || len(s.Operations) != 1 || s.Operations[0].Type != api.OpMerge {
		t.Fatalf("suggestion = %+v", s)
	}
	keep, gone := s.Paths[0], s.Paths[1]
	if _, err := fs.ReadFile(gone); err != nil {
		t.Fatal("the plan wrote: ", err)
	}
	applied := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}, Apply: true})
	if applied.Applied == nil || applied.Applied.Summary.Merged != 1 || applied.Applied.Summary.Failed != 0 {
		t.Fatalf("applied = %+v", applied.Applied)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, _ = openEngine(t, fs, c, Options{})
	defer e.Close()
	if _, err := fs.ReadFile(gone); err == nil {
		t.Errorf("%s is still there", gone)
	}
	merged, err := e.Read(api.ReadParams{Path: keep})
	if err != nil {
		t.Fatal(err)
	}
	md := merged.Markdown
	for _, want := range []string{policyText[0], policyText[7], "write-off", "Differs in"} {
		if !strings.Contains(md, want) {
			t.Errorf("merged entry lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, policyText[1]); n != 1 {
		t.Errorf("a shared sentence is in the merged entry %d times:\n%s", n, md)
	}
	if !strings.Contains(md, "Retries are two days apart") || !strings.Contains(md, "never falls on a weekend") {
		t.Errorf("the reworded sentence is not kept both ways:\n%s", md)
	}
	q, err := e.Query(api.SearchParams{Query: "failed invoices retried escalated collections"})
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, r := range q.Results {
		hits = append(hits, r.Path)
	}
	if len(hits) == 0 || hits[0] != keep || slices.Contains(hits, gone) {
		t.Errorf("query finds %v, want %s first and not %s", hits, keep, gone)
	}
	linker, err := e.Read(api.ReadParams{Path: linkerPath})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(linker.Markdown, keep) || strings.Contains(linker.Markdown, gone) {
		t.Errorf("the link was not rewritten:\n%s", linker.Markdown)
	}
	if again := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}}); len(again.Suggestions) != 0 {
		t.Errorf("after the merge the plan still holds %+v", again.Suggestions)
	}
}

// bigEntry is an entry of many sections, over a 4 KiB limit.
func bigEntry() string {
	var b strings.Builder
	b.WriteString("---\ntitle: Runbook\ntags: [ops]\nrelated: [ops/billing/dunning.md]\n---\n\nThe runbook of the billing service.\n\n## Reason\nwritten after the January outage\n\n## Narrative\nWhat to do when billing breaks.\n\n### Rules\nNever retry by hand.\n")
	for i := range 6 {
		fmt.Fprintf(&b, "\n## Incident %d\n", i+1)
		for j := range 12 {
			fmt.Fprintf(&b, "Step %d of incident %d: check the queue depth, the worker logs and the retry table before paging anyone.\n", j+1, i+1)
		}
	}
	b.WriteString("\n## Facts\n")
	for i := range 10 {
		fmt.Fprintf(&b, "- **queue %d**: drains in %d minutes [capacity]\n", i, i+3)
	}
	return b.String()
}

// bodyLines are the lines of an entry's body: not its front matter,
// headings or blank lines.
func bodyLines(t *testing.T, p string, data []byte) []string {
	t.Helper()
	e, err := tree.ParseEntry(p, data)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(strings.TrimPrefix(string(tree.Render(e)), "---\n"), "\n---\n")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestTidySplitLosesNothing: an entry over the limit becomes entries of
// at most about the limit, the first at its path; every line of it is in
// one of them, and links to it still resolve.
func TestTidySplitLosesNothing(t *testing.T) {
	const runbook = "ops/billing/runbook.md"
	fs := tidyTree(t)
	if err := fs.WriteFile(runbook, []byte(bigEntry())); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("ops/billing/oncall.md", []byte("---\ntitle: On call\nrelated: ["+runbook+"]\n---\n\n## Narrative\nSee the runbook.\n")); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	defer e.Close()
	before, _ := fs.ReadFile(runbook)
	p := api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096, Apply: true}
	res := runTidy(t, e, p)
	if len(res.Suggestions) != 1 || res.Applied.Summary.Failed != 0 {
		t.Fatalf("result = %+v", res)
	}
	parts := res.Suggestions[0].Paths
	if parts[0] != runbook || len(parts) < 3 {
		t.Fatalf("parts = %v", parts)
	}
	var all []string
	for _, q := range parts {
		data, err := fs.ReadFile(q)
		if err != nil {
			t.Fatalf("part %s: %v", q, err)
		}
		if len(data) > 4096+1024 {
			t.Errorf("part %s is %d bytes", q, len(data))
		}
		all = append(all, string(data))
	}
	joined := strings.Join(all, "\n")
	for _, l := range bodyLines(t, runbook, before) {
		if !strings.Contains(joined, l) {
			t.Errorf("line lost in the split: %q", l)
		}
	}
	for i := range 6 {
		if !strings.Contains(joined, fmt.Sprintf("**Incident %d**", i+1)) {
			t.Errorf("heading of incident %d lost", i+1)
		}
	}
	read, err := e.Read(api.ReadParams{Path: runbook})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(read.Backlinks, "ops/billing/oncall.md") {
		t.Errorf("backlinks of %s = %v", runbook, read.Backlinks)
	}
}

// A split keeps the comments of the entry's front matter.
func TestTidySplitKeepsComments(t *testing.T) {
	const runbook = "ops/billing/runbook.md"
	fs := tidyTree(t)
	big := strings.Replace(bigEntry(), "---\ntitle: Runbook\n", "---\n# reviewed by the on-call lead\ntitle: Runbook\n", 1)
	if err := fs.WriteFile(runbook, []byte(big)); err != nil {
		t.Fatal(err)
	}
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	defer e.Close()
	res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096, Apply: true})
	if res.Applied.Summary.Failed != 0 {
		t.Fatalf("result = %+v", res)
	}
	kept := false
	for _, data := range fs.Files() {
		if strings.Contains(string(data), "# reviewed by the on-call lead\n") {
			kept = true
		}
	}
	if !kept {
		t.Errorf("the comment is in no file after the split (%d suggestions)", len(res.Suggestions))
	}
}

// failingFS fails every write of one path.
type failingFS struct {
	host.FS
	path string
}

func (f *failingFS) WriteFile(p string, data []byte) error {
	if p == f.path {
		return fmt.Errorf("injected: %w", host.ErrIO)
	}
	return f.FS.WriteFile(p, data)
}

// TestTidyFailedSplitChangesNothing: a part that cannot be written
// leaves the entry whole and no other part behind.
func TestTidyFailedSplitChangesNothing(t *testing.T) {
	const runbook = "ops/billing/runbook.md"
	mem := tidyTree(t)
	if err := mem.WriteFile(runbook, []byte(bigEntry())); err != nil {
		t.Fatal(err)
	}
	// A folder arbor made has its context.md, which an ADD would write.
	if err := mem.WriteFile("ops/billing/context.md", []byte("# Billing\n")); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: day0}
	e, _ := openEngine(t, mem, c, Options{})
	p := api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096}
	plan := runTidy(t, e, p)
	ops := plan.Suggestions[0].Operations
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		m := map[string]string{}
		for _, q := range []string{"ops/billing"} {
			list, err := mem.ReadDir(q)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range list {
				data, _ := mem.ReadFile(q + "/" + d.Name)
				m[d.Name] = string(data)
			}
		}
		return m
	}
	before := snapshot()
	fs := &failingFS{FS: mem, path: ops[len(ops)-4].Path} // the last part but the first
	e, _ = openEngine(t, fs, c, Options{})
	defer e.Close()
	p.Apply = true
	res := runTidy(t, e, p)
	if res.Applied.Summary.Failed == 0 || res.Undone == 0 {
		t.Fatalf("applied = %+v, undone %d", res.Applied, res.Undone)
	}
	after := snapshot()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s was left behind", k)
		}
	}
}

// TestTidyArchiveAndRestore: a stale draft moves under _archive, which
// search, query and recent leave out unless asked, and a MOVE back
// restores it.
func TestTidyArchiveAndRestore(t *testing.T) {
	const old = "ops/billing/fax_machine.md"
	fs := tidyTree(t)
	if err := fs.WriteFile(old, []byte("---\ntitle: Fax machine\ncreatedAt: 2024-01-01T00:00:00Z\nupdatedAt: 2024-02-01T00:00:00Z\n---\n\n## Narrative\nThe fax machine number for supplier invoices is 555-0100.\n")); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	defer e.Close()
	st, err := e.Status(api.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Upkeep != 1 {
		t.Errorf("status upkeep = %d, want 1", st.Upkeep)
	}
	res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyArchive}, Apply: true})
	if len(res.Suggestions) != 1 || res.Suggestions[0].Paths[0] != old || res.Applied.Summary.Moved != 1 {
		t.Fatalf("result = %+v", res)
	}
	archived := api.ArchiveFolder + "/" + old
	if _, err := fs.ReadFile(archived); err != nil {
		t.Fatal(err)
	}
	find := func(archived bool) []string {
		r, err := e.Search(api.SearchParams{Query: "fax machine supplier", Filters: api.Filters{Archived: archived}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range r.Results {
			out = append(out, h.Path)
		}
		return out
	}
	if got := find(false); slices.Contains(got, archived) {
		t.Errorf("search finds the archive: %v", got)
	}
	if got := find(true); !slices.Contains(got, archived) {
		t.Errorf("search with archived finds %v", got)
	}
	q, err := e.Query(api.SearchParams{Query: "fax machine number"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range q.Results {
		if api.IsArchived(r.Path) {
			t.Errorf("query returns %s", r.Path)
		}
	}
	rec, err := e.Recent(api.RecentParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.Entries {
		if api.IsArchived(r.Path) {
			t.Errorf("recent lists %s", r.Path)
		}
	}
	if rec, _ = e.Recent(api.RecentParams{Limit: 100, Archived: true}); !slices.ContainsFunc(rec.Entries, func(r api.RecentEntry) bool { return r.Path == archived }) {
		t.Errorf("recent with archived lists %v", rec.Entries)
	}
	curateOps(t, e, map[string]any{"type": "MOVE", "path": archived, "to": old, "reason": "still in use"})
	if got := find(false); !slices.Contains(got, old) {
		t.Errorf("restored entry not found: %v", got)
	}
	if again := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyArchive}}); len(again.Suggestions) != 1 {
		t.Errorf("the restored entry is still stale, the plan should say so: %+v", again.Suggestions)
	}
}

// TestTidyCrowdedTopic: a topic over the limit gets subtopics of the
// entries that share a tag.
func TestTidyCrowdedTopic(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		tag := "payments"
		if i%2 == 1 {
			tag = "invoices"
		}
		files[fmt.Sprintf("ops/finance/note_%d.md", i)] = fmt.Sprintf("---\ntitle: Note %d\ntags: [finance, %s]\nupdatedAt: 2026-02-20T00:00:00Z\n---\n\n## Narrative\nNote number %d about %s.\n", i, tag, i, tag)
	}
	fs := newFS(t, files)
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	defer e.Close()
	res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyCrowded}, Crowded: 5, Apply: true})
	if len(res.Suggestions) != 1 || res.Applied.Summary.Moved != 8 || res.Applied.Summary.Failed != 0 {
		t.Fatalf("result = %+v", res)
	}
	for i := range 8 {
		want := fmt.Sprintf("ops/finance/invoices/note_%d.md", i)
		if i%2 == 0 {
			want = fmt.Sprintf("ops/finance/payments/note_%d.md", i)
		}
		if _, err := fs.ReadFile(want); err != nil {
			t.Errorf("note %d: %v", i, err)
		}
	}
}

func TestTidyBadParams(t *testing.T) {
	e, _ := openEngine(t, newFS(t, map[string]string{}), &clock{now: day0}, Options{})
	defer e.Close()
	for _, p := range []api.TidyParams{{Kinds: []string{"dedupe"}}, {Similarity: 0.2}, {SplitBytes: 10}, {Folder: "../x"}, {Crowded: 1}} {
		if _, err := e.Tidy(p); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

// staleTree is tidyTree (one pair of near-duplicates) and n stale drafts
// to archive.
func staleTree(t *testing.T, n int) *countingFS {
	files := tidyFiles()
	for i := range n {
		files[fmt.Sprintf("ops/old/o%03d/note.md", i)] = fmt.Sprintf("---\ntitle: Old note %d\ncreatedAt: 2024-01-01T00:00:00Z\n---\n\n## Narrative\nOld note number %d, long forgotten.\n", i, i)
	}
	return newFS(t, files)
}

// TestTidyLimit: the answer holds the plan's first suggestions up to the
// limit (DefaultTidyLimit when none is given, every one for 0), in the
// plan's order, counts every suggestion by kind and says how many it left
// out; a negative limit is invalid.
func TestTidyLimit(t *testing.T) {
	const n = api.DefaultTidyLimit + 50
	e, _ := openEngine(t, staleTree(t, n), &clock{now: day0}, Options{})
	defer e.Close()
	all := runTidy(t, e, api.TidyParams{Limit: new(0)})
	total := len(all.Suggestions)
	if total < n+1 || all.Omitted != 0 || all.Suggestions[0].Kind != api.TidyMerge {
		t.Fatalf("whole plan: %d suggestions, %d omitted, first %+v", total, all.Omitted, all.Suggestions[0])
	}
	wantCounts := map[string]int{}
	for _, k := range api.TidyKinds {
		wantCounts[k] = 0
	}
	for _, s := range all.Suggestions {
		wantCounts[s.Kind]++
	}
	for _, c := range []struct {
		name  string
		limit *int
		shown int
	}{{"none", nil, api.DefaultTidyLimit}, {"5", new(5), 5}, {"over the plan", new(total + 3), total}} {
		res := runTidy(t, e, api.TidyParams{Limit: c.limit})
		if len(res.Suggestions) != c.shown || res.Omitted != total-c.shown {
			t.Errorf("limit %s: %d suggestions, %d omitted; want %d, %d", c.name, len(res.Suggestions), res.Omitted, c.shown, total-c.shown)
		}
		got, _ := json.Marshal(res.Suggestions)
		if want, _ := json.Marshal(all.Suggestions[:c.shown]); string(got) != string(want) {
			t.Errorf("limit %s: not the plan's first suggestions", c.name)
		}
		if fmt.Sprint(res.Counts) != fmt.Sprint(wantCounts) {
			t.Errorf("limit %s: counts %v, want %v", c.name, res.Counts, wantCounts)
		}
	}
	if _, err := e.Tidy(api.TidyParams{Limit: new(-1)}); err == nil {
		t.Error("limit -1: no error")
	}
}

// TestTidyApplyLimit: an apply without a limit applies the whole plan,
// answering with the first suggestions and their operations' outcomes and
// the summary of all; with a limit it applies only the suggestions it
// answers with, and the next plan holds the rest.
func TestTidyApplyLimit(t *testing.T) {
	const n = api.DefaultTidyLimit + 20
	fs := staleTree(t, n)
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	plan := runTidy(t, e, api.TidyParams{Limit: new(0)})
	total := len(plan.Suggestions)
	res := runTidy(t, e, api.TidyParams{Apply: true, Limit: new(3)})
	if len(res.Suggestions) != 3 || res.Omitted != total-3 {
		t.Fatalf("apply, limit 3: %d suggestions, %d omitted", len(res.Suggestions), res.Omitted)
	}
	ops := 0
	for _, s := range res.Suggestions {
		ops += len(s.Operations)
	}
	if s := res.Applied.Summary; len(res.Applied.Applied) != ops || s.Failed != 0 || s.Merged+s.Moved != ops {
		t.Fatalf("apply, limit 3: applied %+v", res.Applied)
	}
	rest := runTidy(t, e, api.TidyParams{Limit: new(0)})
	if len(rest.Suggestions) != total-3 {
		t.Fatalf("after applying 3 of %d: %d left", total, len(rest.Suggestions))
	}
	res = runTidy(t, e, api.TidyParams{Apply: true})
	if len(res.Suggestions) != api.DefaultTidyLimit || res.Omitted != total-3-api.DefaultTidyLimit {
		t.Fatalf("apply: %d suggestions, %d omitted", len(res.Suggestions), res.Omitted)
	}
	ops = 0
	for _, s := range res.Suggestions {
		ops += len(s.Operations)
	}
	if s := res.Applied.Summary; len(res.Applied.Applied) != ops || s.Failed != 0 || s.Moved != n-2 {
		t.Fatalf("apply: %d outcomes (want %d), summary %+v (want %d moved)", len(res.Applied.Applied), ops, s, n-2)
	}
	if left := runTidy(t, e, api.TidyParams{Limit: new(0)}); len(left.Suggestions) != 0 {
		t.Errorf("after the apply, still planned: %+v", left.Suggestions)
	}
	e.Close()
	for i := range n {
		p := fmt.Sprintf("ops/old/o%03d/note.md", i)
		if _, err := fs.ReadFile(api.ArchiveFolder + "/" + p); err != nil {
			t.Errorf("%s not archived: %v", p, err)
		}
	}
}
