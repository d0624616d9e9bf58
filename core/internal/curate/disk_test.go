package curate

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

const retry = "eng/billing/invoice_retry.md"

// edit changes a file as an editor would, behind the session's back.
func edit(t *testing.T, e *env, p string, change func(string) string) string {
	t.Helper()
	b, err := e.fs.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := change(string(b))
	if err := e.fs.WriteFile(p, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

func addSentence(s string) string {
	return strings.Replace(s, "Retries happen nightly.", "Retries happen nightly. Ana checks the report at nine.", 1)
}

// A person's edit made on disk while a session holds the tree survives the
// session's writes that do not replace what they changed; a write that
// would replace it, or bring back what they removed, is a conflict that
// changes nothing.
func TestDiskIsTheTruth(t *testing.T) {
	tests := []struct {
		name   string
		disk   func(t *testing.T, e *env) // what happens on disk after the session read the tree
		op     api.Operation
		status string
		check  func(t *testing.T, e *env, before map[string]string)
	}{
		{
			name: "update adding a fact keeps the editor's sentence",
			disk: func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op: api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r",
				Content: api.Content{Facts: []api.Fact{{Statement: "the report lists failures"}}}},
			status: api.StatusSuccess,
			check: func(t *testing.T, e *env, _ map[string]string) {
				en := e.entry(t, retry)
				if !strings.Contains(en.Narrative.Text, "Ana checks the report at nine.") || len(en.Facts) != 2 {
					t.Errorf("narrative %q, facts %v", en.Narrative.Text, en.Facts)
				}
			},
		},
		{
			name: "update of parts the editor left alone applies",
			disk: func(t *testing.T, e *env) {
				edit(t, e, retry, func(s string) string {
					return strings.Replace(s, "summary: invoices are retried", "summary: invoices are retried nightly", 1)
				})
			},
			op: api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r",
				Content: api.Content{Narrative: &api.Narrative{Rules: "Four retries."}}},
			status: api.StatusSuccess,
			check: func(t *testing.T, e *env, _ map[string]string) {
				en := e.entry(t, retry)
				if en.Summary != "invoices are retried nightly" || en.Narrative.Rules != "Four retries." {
					t.Errorf("summary %q, rules %q", en.Summary, en.Narrative.Rules)
				}
			},
		},
		{
			name:   "update replacing the narrative the editor changed is a conflict",
			disk:   func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op:     api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Narrative: &api.Narrative{Text: "Retries happen hourly."}}},
			status: api.StatusConflict,
		},
		{
			name: "upsert replacing the title the editor changed is a conflict",
			disk: func(t *testing.T, e *env) {
				edit(t, e, retry, func(s string) string { return strings.Replace(s, "title: Invoice retry", "title: Invoice retries", 1) })
			},
			op:     api.Operation{Type: api.OpUpsert, Path: retry, Title: "Retry policy", Reason: "r"},
			status: api.StatusConflict,
		},
		{
			name:   "update of an entry deleted on disk does not bring it back",
			disk:   func(t *testing.T, e *env) { must(t, e.fs.Remove(retry)) },
			op:     api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"x"}}},
			status: api.StatusConflict,
		},
		{
			name:   "upsert of an entry deleted on disk does not bring it back",
			disk:   func(t *testing.T, e *env) { must(t, e.fs.Remove(retry)) },
			op:     api.Operation{Type: api.OpUpsert, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"x"}}},
			status: api.StatusConflict,
		},
		{
			name:   "add of an entry deleted on disk brings it back: the session asked",
			disk:   func(t *testing.T, e *env) { must(t, e.fs.Remove(retry)) },
			op:     api.Operation{Type: api.OpAdd, Path: retry, Reason: "r", Content: api.Content{Narrative: &api.Narrative{Text: "again"}}},
			status: api.StatusSuccess,
		},
		{
			name: "add over a file created on disk fails",
			disk: func(t *testing.T, e *env) {
				must(t, e.fs.WriteFile("eng/billing/new_note.md", []byte("# New note\n\nWritten in an editor.\n")))
			},
			op:     api.Operation{Type: api.OpAdd, Path: "eng/billing/new_note.md", Reason: "r"},
			status: api.StatusFailed,
		},
		{
			name:   "delete of an entry changed on disk is a conflict",
			disk:   func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op:     api.Operation{Type: api.OpDelete, Path: retry, Reason: "r"},
			status: api.StatusConflict,
		},
		{
			name:   "delete of a folder holding a file changed on disk is a conflict",
			disk:   func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op:     api.Operation{Type: api.OpDelete, Path: "eng/billing", Reason: "r"},
			status: api.StatusConflict,
		},
		{
			name: "delete of a folder holding a file created on disk is a conflict",
			disk: func(t *testing.T, e *env) {
				must(t, e.fs.WriteFile("eng/billing/new_note.md", []byte("# New note\n\nWritten in an editor.\n")))
			},
			op:     api.Operation{Type: api.OpDelete, Path: "eng/billing", Reason: "r"},
			status: api.StatusConflict,
		},
		{
			name: "merge folds in what the editor wrote in the source",
			disk: func(t *testing.T, e *env) {
				edit(t, e, "eng/billing/old_retry.md", func(s string) string { return s + "\nA line added in an editor.\n" })
			},
			op:     api.Operation{Type: api.OpMerge, Path: "eng/billing/old_retry.md", MergeTarget: retry, Reason: "r"},
			status: api.StatusSuccess,
			check: func(t *testing.T, e *env, _ map[string]string) {
				b, _ := e.fs.ReadFile(retry)
				if !strings.Contains(string(b), "A line added in an editor.") {
					t.Errorf("the merged entry lost the editor's line:\n%s", b)
				}
			},
		},
		{
			// tidy's merges carry the text they planned from the copies, as
			// an agent's MERGE carries the text it wrote from what it read.
			name:   "merge replacing the target's narrative the editor changed is a conflict",
			disk:   func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op:     api.Operation{Type: api.OpMerge, Path: "eng/billing/old_retry.md", MergeTarget: retry, Reason: "r", Content: api.Content{Narrative: &api.Narrative{Text: "Retries happen nightly; they used to run hourly."}}},
			status: api.StatusConflict,
		},
		{
			name: "merge replacing the source's narrative the editor changed is a conflict",
			disk: func(t *testing.T, e *env) {
				edit(t, e, "eng/billing/old_retry.md", func(s string) string {
					return strings.Replace(s, "Retries used to run hourly.", "Retries used to run hourly, until the 2025 outage.", 1)
				})
			},
			op:     api.Operation{Type: api.OpMerge, Path: "eng/billing/old_retry.md", MergeTarget: retry, Reason: "r", Content: api.Content{Narrative: &api.Narrative{Text: "Retries happen nightly; they used to run hourly."}}},
			status: api.StatusConflict,
		},
		{
			name:   "merge with a summary, of entries whose narrative the editor changed, applies",
			disk:   func(t *testing.T, e *env) { edit(t, e, retry, addSentence) },
			op:     api.Operation{Type: api.OpMerge, Path: "eng/billing/old_retry.md", MergeTarget: retry, Reason: "r", Summary: "invoices are retried, nightly now"},
			status: api.StatusSuccess,
			check: func(t *testing.T, e *env, _ map[string]string) {
				if en := e.entry(t, retry); !strings.Contains(en.Narrative.Text, "Ana checks the report at nine.") {
					t.Errorf("the merged entry lost the editor's sentence: %q", en.Narrative.Text)
				}
			},
		},
		{
			name:   "merge of an entry deleted on disk is a conflict",
			disk:   func(t *testing.T, e *env) { must(t, e.fs.Remove("eng/billing/old_retry.md")) },
			op:     api.Operation{Type: api.OpMerge, Path: "eng/billing/old_retry.md", MergeTarget: retry, Reason: "r"},
			status: api.StatusConflict,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fixture)
			tc.disk(t, e)
			before := treeFiles(e.fs)
			a := one(t, e, tc.op)
			if a.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", a.Status, a.Message, tc.status)
			}
			if tc.status != api.StatusSuccess {
				if d := diffFiles(before, treeFiles(e.fs)); d != "" {
					t.Errorf("a %s operation changed files:\n%s", tc.status, d)
				}
			}
			if tc.status == api.StatusConflict && !strings.HasPrefix(a.Message, "conflict: ") {
				t.Errorf("message %q", a.Message)
			}
			if tc.check != nil {
				tc.check(t, e, before)
			}
			// What the session holds is what is on disk now.
			if got, want := catalogState(e.c.Catalog), catalogState(load(t, e.fs)); got != want {
				t.Errorf("catalog after the operation:\n%s\nwant (a fresh load):\n%s", got, want)
			}
		})
	}
}

// The engine hears of every entry read again, so that its index follows.
func TestRefreshNotifies(t *testing.T) {
	e := newEnv(t, fixture)
	edit(t, e, retry, addSentence)
	mustSucceed(t, one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"t"}}}))
	if len(e.changes) != 2 || e.changes[0].Entry == nil || !strings.Contains(e.changes[0].Entry.Narrative.Text, "Ana checks") {
		t.Errorf("changes %+v: want the entry read again, then the update", e.changes)
	}
	a := one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"u"}}})
	mustSucceed(t, a)
	if len(e.changes) != 3 {
		t.Errorf("an unchanged file was read again: %+v", e.changes)
	}
}

// raceFS writes its content to path at the n-th read of it: an editor
// saving while an operation runs, between its check and its write.
type raceFS struct {
	host.FS
	path    string
	n       int
	content string
	reads   int
}

func (f *raceFS) ReadFile(p string) ([]byte, error) {
	if p == f.path {
		f.reads++
		if f.reads == f.n {
			if err := f.FS.WriteFile(p, []byte(f.content)); err != nil {
				return nil, err
			}
		}
	}
	return f.FS.ReadFile(p)
}

// A file changed between an operation's check and its write fails the
// write (a compare-and-swap on the stamp), and the operation changes
// nothing.
func TestWriteIsCompareAndSwap(t *testing.T) {
	e := newEnv(t, fixture)
	b, _ := e.fs.ReadFile(retry)
	edited := addSentence(string(b))
	// Read 1 is the refresh, read 2 the write's own look before it writes.
	e.c.FS = &raceFS{FS: e.fs, path: retry, n: 2, content: edited}
	a := one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"x"}}})
	if a.Status != api.StatusConflict || !strings.Contains(a.Message, "changed on disk while the operation ran") {
		t.Fatalf("%+v", a)
	}
	if got, _ := e.fs.ReadFile(retry); string(got) != edited {
		t.Errorf("the editor's save was overwritten:\n%s", got)
	}
	if lines := auditLines(t, e.fs); len(lines) != 1 || lines[0].Status != api.StatusConflict {
		t.Errorf("audit %+v", lines)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An operation made from a version of an entry (its base, from read) is a
// conflict when the file holds another version now, even where the
// session has already read the change: a watching engine reads a person's
// edit before the agent's call, so only the version the agent's text was
// made from can tell that the text would replace what it never saw.
func TestBaseVersion(t *testing.T) {
	const other = "eng/billing/old_retry.md"
	version := func(t *testing.T, e *env, p string) string {
		t.Helper()
		b, err := e.fs.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return tree.Version(b)
	}
	narrative := api.Content{Narrative: &api.Narrative{Text: "Retries happen hourly."}}
	tests := []struct {
		name string
		op   func(read map[string]string) api.Operation // read: the versions the agent read, before the edit
	}{
		{"update", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: narrative, Base: v[retry]}
		}},
		{"upsert", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpUpsert, Path: retry, Reason: "r", Content: narrative, Base: v[retry]}
		}},
		{"delete", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpDelete, Path: retry, Reason: "r", Base: v[retry]}
		}},
		{"move", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpMove, Path: retry, To: "eng/payments", Reason: "r", Base: v[retry]}
		}},
		{"merge source", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpMerge, Path: retry, MergeTarget: other, Reason: "r", Base: v[retry], TargetBase: v[other]}
		}},
		{"merge target", func(v map[string]string) api.Operation {
			return api.Operation{Type: api.OpMerge, Path: other, MergeTarget: retry, Reason: "r", Base: v[other], TargetBase: v[retry]}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fixture)
			read := map[string]string{retry: version(t, e, retry), other: version(t, e, other)}
			edit(t, e, retry, addSentence)
			if _, err := e.c.refresh(retry); err != nil { // the watcher's doing
				t.Fatal(err)
			}
			before := treeFiles(e.fs)
			a := one(t, e, tc.op(read))
			if a.Status != api.StatusConflict || !strings.Contains(a.Message, read[retry]) {
				t.Fatalf("from the version read before the edit: %s: %s", a.Status, a.Message)
			}
			if d := diffFiles(before, treeFiles(e.fs)); d != "" {
				t.Errorf("the conflict changed files:\n%s", d)
			}
			// From the version that holds the edit, it applies.
			now := map[string]string{retry: version(t, e, retry), other: version(t, e, other)}
			a = one(t, e, tc.op(now))
			mustSucceed(t, a)
			if tc.name == "update" || tc.name == "upsert" || strings.HasPrefix(tc.name, "merge") {
				written := retry
				if tc.name == "merge source" {
					written = other
				}
				if a.Version != version(t, e, written) {
					t.Errorf("applied version %q, the file's %q", a.Version, version(t, e, written))
				}
			}
		})
	}

	t.Run("remembered", func(t *testing.T) {
		// The session remembers the entry of the version it handed out:
		// what the operation unites applies, what it replaces that changed
		// is a conflict.
		e := newEnv(t, fixture)
		e.c.Versions = &Versions{}
		v := version(t, e, retry)
		e.c.Versions.Put(v, e.entry(t, retry))
		edit(t, e, retry, addSentence)
		if _, err := e.c.refresh(retry); err != nil {
			t.Fatal(err)
		}
		a := one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: narrative, Base: v})
		if a.Status != api.StatusConflict || !strings.Contains(a.Message, "narrative") {
			t.Fatalf("replacing the narrative changed since the base: %s: %s", a.Status, a.Message)
		}
		a = one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Base: v,
			Content: api.Content{Facts: []api.Fact{{Statement: "the report lists failures"}}}})
		mustSucceed(t, a)
		if en := e.entry(t, retry); !strings.Contains(en.Narrative.Text, "Ana checks the report at nine.") || len(en.Facts) != 2 {
			t.Errorf("a fact added from the base: narrative %q, facts %v", en.Narrative.Text, en.Facts)
		}
		if got, ok := e.c.Versions.Get(a.Version); !ok || len(got.Facts) != 2 {
			t.Errorf("the version written is not remembered: %v", got)
		}
		// DELETE takes the entry whole: any change since the base is a conflict.
		if a := one(t, e, api.Operation{Type: api.OpDelete, Path: retry, Reason: "r", Base: v}); a.Status != api.StatusConflict {
			t.Errorf("a DELETE from a version changed since: %s: %s", a.Status, a.Message)
		}
	})

	t.Run("removed", func(t *testing.T) {
		e := newEnv(t, fixture)
		v := version(t, e, retry)
		if err := e.fs.Remove(retry); err != nil {
			t.Fatal(err)
		}
		a := one(t, e, api.Operation{Type: api.OpUpsert, Path: retry, Reason: "r", Content: narrative, Base: v})
		if _, err := e.fs.ReadFile(retry); a.Status != api.StatusConflict || err == nil {
			t.Errorf("an UPSERT from a version of an entry removed since: %s: %s", a.Status, a.Message)
		}
	})

	t.Run("entry named without .md", func(t *testing.T) {
		// "a/b" with no folder a/b names the entry a/b.md: its base is checked.
		e := newEnv(t, fixture)
		v := version(t, e, retry)
		edit(t, e, retry, addSentence)
		a := one(t, e, api.Operation{Type: api.OpDelete, Path: strings.TrimSuffix(retry, ".md"), Reason: "r", Base: v})
		if a.Status != api.StatusConflict {
			t.Errorf("a DELETE of %s without .md from a version changed since: %s: %s", retry, a.Status, a.Message)
		}
	})

	t.Run("chained", func(t *testing.T) {
		// The version an operation wrote is the base of the next.
		e := newEnv(t, fixture)
		a := one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: narrative, Base: version(t, e, retry)})
		mustSucceed(t, a)
		mustSucceed(t, one(t, e, api.Operation{Type: api.OpUpdate, Path: retry, Reason: "r", Content: api.Content{Tags: []string{"t"}}, Base: a.Version}))
		add := one(t, e, api.Operation{Type: api.OpAdd, Path: "eng/billing", Title: "Dunning", Content: narrative, Reason: "r"})
		mustSucceed(t, add)
		if add.Version != version(t, e, add.Path) {
			t.Errorf("ADD's version %q, the file's %q", add.Version, version(t, e, add.Path))
		}
	})

	for _, op := range []api.Operation{
		{Type: api.OpAdd, Path: "eng/billing", Title: "New", Reason: "r", Base: "0123456789abcdef"},
		{Type: api.OpUpdate, Path: retry, Reason: "r", TargetBase: "0123456789abcdef"},
		{Type: api.OpDelete, Path: "eng/billing", Reason: "r", Base: "0123456789abcdef"},
	} {
		e := newEnv(t, fixture)
		before := treeFiles(e.fs)
		if a := one(t, e, op); a.Status != api.StatusFailed || !strings.Contains(strings.ToLower(a.Message), "base") {
			t.Errorf("%s %s with base %q, targetBase %q: %s: %s", op.Type, op.Path, op.Base, op.TargetBase, a.Status, a.Message)
		}
		if d := diffFiles(before, treeFiles(e.fs)); d != "" {
			t.Errorf("a refused operation changed files:\n%s", d)
		}
	}
}
