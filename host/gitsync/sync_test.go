package gitsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/gitsync"
	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/internal/testroot"
)

func entry(title, summary, narrative string, facts ...string) string {
	s := "---\ntitle: " + title + "\nsummary: " + summary + "\ncreatedAt: 2026-01-05T09:00:00Z\nupdatedAt: 2026-01-05T09:00:00Z\n---\n\n## Narrative\n" + narrative + "\n"
	if len(facts) > 0 {
		s += "\n## Facts\n- " + strings.Join(facts, "\n- ") + "\n"
	}
	return s
}

// files lists every file of a root outside .git/ and .arbor/ with its bytes.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".arbor") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			r, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(r)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// engine starts the engine module on root, unopened (a merge needs no
// open), and opens it when asked.
func engine(t *testing.T, root string) *runtime.Engine {
	t.Helper()
	eng, err := runtime.New(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

func opened(t *testing.T, root string) (*runtime.Engine, api.OpenResult) {
	t.Helper()
	eng := engine(t, root)
	res, err := eng.Open(context.Background(), api.OpenParams{FixedTime: "2026-03-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return eng, res
}

// newRemote makes an empty bare repository, the team's remote, in a
// folder of its own (dir), where the people's roots go too.
func newRemote(t *testing.T) (dir, remote string) {
	t.Helper()
	dir = t.TempDir()
	remote = filepath.Join(dir, "team.git")
	if _, err := git.PlainInit(remote, true); err != nil {
		t.Fatal(err)
	}
	return dir, remote
}

// newTeam is newRemote with two roots syncing through it: alice's holds
// files (path, text, path, text, ...) and syncs first, then bob's, empty,
// takes them. clock is the one both synced by.
func newTeam(t *testing.T, files ...string) (dir, remote, a, b string, clock *time.Time) {
	t.Helper()
	dir, remote = newRemote(t)
	a, b = filepath.Join(dir, "alice"), filepath.Join(dir, "bob")
	c := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i+1 < len(files); i += 2 {
		testroot.Write(t, a, files[i], files[i+1])
	}
	sync(t, a, remote, &c)
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	sync(t, b, remote, &c)
	return dir, remote, a, b, &c
}

func sync(t *testing.T, root, remote string, clock *time.Time) gitsync.Report {
	t.Helper()
	rep, _ := syncSteps(t, root, remote, clock)
	return rep
}

// syncSteps is sync with the steps the sync reported, as "phase round".
func syncSteps(t *testing.T, root, remote string, clock *time.Time) (gitsync.Report, []string) {
	t.Helper()
	*clock = clock.Add(time.Minute)
	now := *clock
	var steps []string
	rep, err := gitsync.Sync(context.Background(), root, engine(t, root), gitsync.Options{Remote: remote, Now: func() time.Time { return now },
		Progress: func(s gitsync.Step) {
			if s.Message == "" {
				t.Errorf("step %+v without a message", s)
			}
			steps = append(steps, fmt.Sprint(s.Phase, " ", s.Round))
		}})
	if err != nil {
		t.Fatalf("sync %s: %v", filepath.Base(root), err)
	}
	return rep, steps
}

// Two roots and a bare repository, with work on both sides between syncs:
// the same entry edited on both, an edit against a delete, adds on both
// (one path added by both), a move on one side against an edit on the
// other, a true conflict. Synced both ways they converge: nothing lost,
// both roots byte-identical, both answer alike; .arbor/ is in no commit;
// and the engine re-reads only what a sync changed.
func TestTwoRootsConverge(t *testing.T) {
	ctx := context.Background()
	dir, remote := newRemote(t)
	a, b := filepath.Join(dir, "alice"), filepath.Join(dir, "bob")
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

	// Alice's root, with an engine that has written its .arbor/.
	testroot.Write(t, a, "ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday.\nThe outgoing engineer writes a handover note."))
	testroot.Write(t, a, "ops/pager/escalation.md", entry("Escalation", "Pages escalate.", "Page the secondary after fifteen minutes."))
	testroot.Write(t, a, "ops/pager/old_runbook.md", entry("Old runbook", "The old paging runbook.", "Restart the pager bridge by hand."))
	testroot.Write(t, a, "ops/deploys/freeze.md", entry("Deploy freeze", "No deploys on Fridays.", "Deploys stop on Friday at noon.\nHotfixes need two approvals.\nThe freeze ends on Monday at nine."))
	testroot.Write(t, a, "ops/billing/refunds.md", entry("Refunds", "Refunds up to 100 EUR.", "Support approves refunds up to 100 EUR."))
	testroot.Write(t, a, "ops/pager/context.md", "# Pager\n\n## Overview\nPaging and on-call.\n")
	eng, _ := opened(t, a)
	eng.Close(ctx)

	first, steps := syncSteps(t, a, remote, &clock)
	if first.Merge != "initial" || !first.Pushed || first.Committed == "" || first.Ahead != 1 || first.Behind != 0 {
		t.Fatalf("first sync: %+v", first)
	}
	if want := []string{"commit 0", "fetch 1", "push 1"}; !slices.Equal(steps, want) {
		t.Errorf("the first sync's steps: %v, want %v", steps, want)
	}
	// Bob starts from the remote: his root is made a repository and
	// fast-forwarded to it.
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	if rep := sync(t, b, remote, &clock); rep.Merge != "fast-forward" || len(rep.Changed) != 6 || rep.Behind != 1 || rep.Ahead != 0 {
		t.Fatalf("bob's first sync: %+v", rep)
	}

	// Alice works through the engine (audited), Bob in his editor.
	eng, _ = opened(t, a)
	cr, err := eng.Curate(ctx, api.CurateParams{Operations: []api.Operation{
		{Type: api.OpUpdate, Path: "ops/pager/rotation.md", Content: api.Content{Narrative: &api.Narrative{Text: "The pager rotates every Monday.\nThe outgoing engineer writes a handover note.\nHandover notes live in the ops channel."}, Tags: []string{"oncall"}}, Reason: "where handovers go"},
		{Type: api.OpDelete, Path: "ops/pager/escalation.md", Reason: "escalation moved to the incident policy"},
		{Type: api.OpAdd, Path: "ops/incidents", Title: "Incident policy", Content: api.Content{Narrative: &api.Narrative{Text: "Incidents get a commander within five minutes."}}, Reason: "new policy"},
		{Type: api.OpUpsert, Path: "ops/pager/old_runbook.md", Content: api.Content{Narrative: &api.Narrative{Text: "Restart the pager bridge by hand, then page the secondary."}}, Reason: "runbook step"},
		{Type: api.OpUpdate, Path: "ops/billing/refunds.md", Summary: "Refunds up to 150 EUR.", Reason: "limit raised"},
	}})
	if err != nil || cr.Summary.Failed != 0 {
		t.Fatalf("alice's curate: %+v %v", cr, err)
	}
	eng.Close(ctx)

	bobRotation := strings.Replace(testroot.Read(t, b, "ops/pager/rotation.md"), "The pager rotates every Monday.", "The pager rotates every Monday at ten.", 1)
	bobRotation = strings.Replace(bobRotation, "---\n\n## Narrative", "---\n\n## Narrative", 1) + "\n## Facts\n- **handover**: handover is at ten on Mondays\n"
	testroot.Write(t, b, "ops/pager/rotation.md", bobRotation)
	testroot.Write(t, b, "ops/pager/escalation.md", strings.Replace(testroot.Read(t, b, "ops/pager/escalation.md"), "fifteen minutes", "ten minutes", 1))
	testroot.Write(t, b, "ops/oncall/pairing.md", entry("On-call pairing", "New engineers shadow.", "New engineers shadow two rotations first."))
	// Bob moves the old runbook into a folder of runbooks.
	runbook := testroot.Read(t, b, "ops/pager/old_runbook.md")
	os.Remove(filepath.Join(b, "ops/pager/old_runbook.md"))
	testroot.Write(t, b, "ops/runbooks/old_runbook.md", runbook)
	testroot.Write(t, b, "ops/billing/refunds.md", strings.Replace(testroot.Read(t, b, "ops/billing/refunds.md"), "Refunds up to 100 EUR.", "Refunds up to 120 EUR.", 1))
	// Both add the same path (Alice below, after her curate).
	testroot.Write(t, b, "ops/deploys/rollback.md", entry("Rollback", "Roll back first.", "Roll back before debugging.", "**rollback**: a bad deploy is rolled back within ten minutes"))
	testroot.Write(t, a, "ops/deploys/rollback.md", entry("Rollback", "Roll back first.", "Roll back before debugging.", "**owner**: the deployer owns the rollback"))

	ra := sync(t, a, remote, &clock)
	if ra.Merge != "none" || !strings.Contains(commitMessage(t, a, ra.Committed), "UPDATE ops/pager/rotation.md: where handovers go") {
		t.Fatalf("alice's sync: %+v\n%s", ra, commitMessage(t, a, ra.Committed))
	}
	rb, steps := syncSteps(t, b, remote, &clock)
	// Bob brings in Alice's commit and sends his own and the merge.
	if rb.Merge != "merge" || rb.Behind != 1 || rb.Ahead != 2 {
		t.Fatalf("bob's sync: %+v", rb)
	}
	if want := []string{"commit 0", "fetch 1", "merge 1", "push 1"}; !slices.Equal(steps, want) {
		t.Errorf("bob's steps: %v, want %v", steps, want)
	}
	statuses := map[string]string{}
	for _, f := range rb.Files {
		statuses[f.Path] = f.Status
		if f.Content != nil {
			t.Errorf("the report carries the content of %s", f.Path)
		}
	}
	want := map[string]string{
		"ops/pager/rotation.md":       api.MergeMerged,
		"ops/pager/escalation.md":     api.MergeKept,
		"ops/runbooks/old_runbook.md": api.MergeMoved,
		"ops/pager/old_runbook.md":    api.MergeDeleted,
		"ops/billing/refunds.md":      api.MergeConflict,
		"ops/deploys/rollback.md":     api.MergeMerged,
	}
	for p, s := range want {
		if statuses[p] != s {
			t.Errorf("merge of %s: %s, want %s (%v)", p, statuses[p], s, statuses)
		}
	}

	// Alice fast-forwards to Bob's merge; a second round changes nothing.
	eng, _ = opened(t, a) // the index is in step before the sync
	eng.Close(ctx)
	ra = sync(t, a, remote, &clock)
	if ra.Merge != "fast-forward" || ra.Behind != 2 || ra.Ahead != 0 {
		t.Fatalf("alice's second sync: %+v", ra)
	}
	_, open := opened(t, a)
	changedDocs := 0
	for _, p := range ra.Changed {
		if strings.HasSuffix(p, ".md") {
			changedDocs++
		}
	}
	t.Logf("after the fast-forward (%d files changed, %d markdown): index %+v", len(ra.Changed), changedDocs, open.Index)
	if open.Index.Indexed > changedDocs || open.Index.Reused == 0 {
		t.Errorf("after the sync the engine re-indexed %d documents (reused %d), the sync changed %d: %v", open.Index.Indexed, open.Index.Reused, changedDocs, ra.Changed)
	}
	if rb2 := sync(t, b, remote, &clock); rb2.Merge != "none" || rb2.Committed != "" {
		t.Errorf("bob's second sync: %+v", rb2)
	}

	fa, fb := files(t, a), files(t, b)
	if len(fa) != len(fb) {
		t.Errorf("alice has %d files, bob %d", len(fa), len(fb))
	}
	for p, x := range fa {
		if fb[p] != x {
			t.Errorf("%s differs:\nalice\n%s\nbob\n%s", p, x, fb[p])
		}
	}
	// Nothing lost.
	for p, subs := range map[string][]string{
		"ops/pager/rotation.md":            {"Monday at ten", "Handover notes live in the ops channel", "handover is at ten", "oncall"},
		"ops/pager/escalation.md":          {"ten minutes"},
		"ops/runbooks/old_runbook.md":      {"then page the secondary"},
		"ops/billing/refunds.md":           {"150 EUR", "120 EUR", "## Merge Conflict"},
		"ops/deploys/rollback.md":          {"rolled back within ten minutes", "the deployer owns the rollback"},
		"ops/incidents/incident_policy.md": {"commander"},
		"ops/oncall/pairing.md":            {"shadow"},
	} {
		for _, s := range subs {
			if !strings.Contains(fa[p], s) {
				t.Errorf("%s lacks %q:\n%s", p, s, fa[p])
			}
		}
	}
	if _, ok := fa["ops/pager/old_runbook.md"]; ok {
		t.Error("the moved entry is still at its old path")
	}

	// Both answer alike, and both report the conflict.
	ea, oa := opened(t, a)
	eb, ob := opened(t, b)
	conflicted := func(ws []api.Warning) []string {
		var out []string
		for _, w := range ws {
			if w.Kind == api.WarnConflict {
				out = append(out, w.Path)
			}
		}
		return out
	}
	if ca, cb := conflicted(oa.Warnings), conflicted(ob.Warnings); !slices.Equal(ca, []string{"ops/billing/refunds.md"}) || !slices.Equal(ca, cb) {
		t.Errorf("conflicts reported: alice %v, bob %v", ca, cb)
	}
	for _, q := range []string{"when does the pager rotate", "who owns a rollback", "how fast are pages escalated"} {
		x, err1 := ea.Query(ctx, api.SearchParams{Query: q})
		y, err2 := eb.Query(ctx, api.SearchParams{Query: q})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if paths(x.Results) != paths(y.Results) || x.Tier != y.Tier || x.Answer != y.Answer {
			t.Errorf("%q: alice %s (tier %d), bob %s (tier %d)", q, paths(x.Results), x.Tier, paths(y.Results), y.Tier)
		}
	}

	// .arbor/ is in no commit of the remote.
	r, c := remoteHead(t, remote)
	iter, _ := r.Log(&git.LogOptions{From: c.Hash})
	iter.ForEach(func(c *object.Commit) error {
		tr, _ := c.Tree()
		return tr.Files().ForEach(func(f *object.File) error {
			if strings.HasPrefix(f.Name, ".arbor/") {
				t.Errorf("commit %s holds %s", c.Hash, f.Name)
			}
			return nil
		})
	})
	if c.NumParents() != 2 {
		t.Errorf("the remote's head %s has %d parents, want the merge commit's 2", c.Hash, c.NumParents())
	}

	st, err := gitsync.GetStatus(ctx, b, gitsync.Options{}, true)
	if err != nil || st.Ahead != 0 || st.Behind != 0 || len(st.Unsynced) != 0 {
		t.Errorf("bob's status after converging: %+v %v", st, err)
	}
	// Scripts (and the JS package's syncStatus) read a list, never null.
	if b, _ := json.Marshal(st); !strings.Contains(string(b), `"unsynced":[]`) {
		t.Errorf("the status of a synced root as JSON: %s", b)
	}
	testroot.Write(t, b, "ops/pager/rotation.md", bobRotation+"\nmore\n")
	if st, _ := gitsync.GetStatus(ctx, b, gitsync.Options{}, false); !slices.Equal(st.Unsynced, []string{"ops/pager/rotation.md"}) {
		t.Errorf("an unsynced edit: %+v", st)
	}
}

func paths(rs []api.Hit) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return strings.Join(out, ",")
}

func commitMessage(t *testing.T, root, hash string) string {
	t.Helper()
	r, err := git.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{hash} {
		h, err := r.ResolveRevision("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		co, err := r.CommitObject(*h)
		if err != nil {
			t.Fatal(err)
		}
		for co.Hash.String() != c && co.NumParents() > 0 {
			co, _ = co.Parent(0)
		}
		return co.Message
	}
	return ""
}

// A sync that fails after it wrote files (here its push: the remote is
// gone by then) still lists them, for the engine to read again; the next
// sync, with the remote back, pushes what the first committed.
func TestFailedSyncListsWhatItChanged(t *testing.T) {
	_, remote, a, b, clock := newTeam(t, "ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."))
	testroot.Write(t, a, "ops/pager/escalation.md", entry("Escalation", "Pages escalate.", "Page the secondary."))
	sync(t, a, remote, clock)
	testroot.Write(t, b, "ops/pager/handover.md", entry("Handover", "Write a note.", "The outgoing engineer writes a note."))

	away := remote + ".away"
	rep, err := gitsync.Sync(context.Background(), b, engine(t, b), gitsync.Options{Progress: func(s gitsync.Step) {
		if s.Phase == gitsync.PhasePush {
			if err := os.Rename(remote, away); err != nil {
				t.Error(err)
			}
		}
	}})
	if err == nil {
		t.Fatalf("a push to a remote that is gone succeeded: %+v", rep)
	}
	if !slices.Equal(rep.Changed, []string{"ops/pager/escalation.md"}) || testroot.Read(t, b, "ops/pager/escalation.md") == "" {
		t.Fatalf("the failed sync's report: %+v (%v)", rep, err)
	}
	if err := os.Rename(away, remote); err != nil {
		t.Fatal(err)
	}
	if rep := sync(t, b, remote, clock); rep.Merge != "none" || rep.Ahead != 2 || rep.Committed != "" {
		t.Errorf("the sync after: %+v", rep)
	}
}

// Many changes at once (past the count staged one by one) are committed
// alike: additions, edits and deletions, and nothing of .arbor/.
func TestManyChangesCommitted(t *testing.T) {
	dir, remote := newRemote(t)
	a := filepath.Join(dir, "alice")
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 100 {
		testroot.Write(t, a, fmt.Sprintf("ops/batch/entry_%03d.md", i), entry(fmt.Sprintf("Entry %d", i), "One of many.", fmt.Sprintf("Entry number %d.", i)))
	}
	testroot.Write(t, a, ".arbor/state.json", "{}\n")
	sync(t, a, remote, &clock)
	for i := range 100 {
		p := filepath.Join(a, fmt.Sprintf("ops/batch/entry_%03d.md", i))
		switch {
		case i < 40:
			os.Remove(p)
		case i < 80:
			testroot.Write(t, a, fmt.Sprintf("ops/batch/entry_%03d.md", i), entry(fmt.Sprintf("Entry %d", i), "One of many.", fmt.Sprintf("Entry number %d, edited.", i)))
		}
	}
	testroot.Write(t, a, "ops/other/new.md", entry("New", "A new one.", "Added with the rest."))
	if rep := sync(t, a, remote, &clock); rep.Committed == "" || rep.Ahead != 1 {
		t.Fatalf("the sync of 81 changes: %+v", rep)
	}
	pushed := pushedFiles(t, remote)
	if local := files(t, a); !maps.Equal(pushed, local) {
		t.Errorf("the remote has %d files, the root %d", len(pushed), len(local))
	}
}
