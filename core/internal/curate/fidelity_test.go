package curate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// humanEntry is an entry as a person writes it in an editor: a byte-order
// mark, CRLF line endings, YAML comments, keys the engine does not know
// (nested, listed, multi-line, anchored), dates as written, an HTML
// comment, a fence holding "---" lines, a section of their own.
const humanEntry = "\uFEFF---\r\n" +
	"# Owned by billing; ask alice before changing the retry count.\r\n" +
	"title: Invoice retry\r\n" +
	"owner: alice   # until June\r\n" +
	"due: 2026-01-05\r\n" +
	"meta:\r\n" +
	"  team: billing\r\n" +
	"  # checked in May\r\n" +
	"  links:\r\n" +
	"    - a\r\n" +
	"    - b\r\n" +
	"notes: |\r\n" +
	"  line one\r\n" +
	"  line two\r\n" +
	"base: &b shared\r\n" +
	"copy: *b\r\n" +
	"related: [a/b/other.md]\r\n" +
	"---\r\n" +
	"\r\n" +
	"Preamble with trailing spaces   \r\n" +
	"<!-- a note to self -->\r\n" +
	"\r\n" +
	"```\r\n" +
	"---\r\n" +
	"not front matter\r\n" +
	"---\r\n" +
	"```\r\n" +
	"\r\n" +
	"## Narrative\r\n" +
	"Retries happen.\r\n" +
	"\r\n" +
	"## My own section\r\n" +
	"keep me\r\n"

// humanKept are the pieces of humanEntry any engine write must keep, as
// the canonical form writes them.
var humanKept = []string{
	"# Owned by billing; ask alice before changing the retry count.\n",
	"# until June\nowner: alice\n",
	"due: 2026-01-05\n",
	"# checked in May\nmeta: {team: billing, links: [a, b]}\n",
	`notes: "line one\nline two\n"` + "\n",
	"base: shared\ncopy: shared\n",
	"Preamble with trailing spaces   \n<!-- a note to self -->\n",
	"```\n---\nnot front matter\n---\n```\n",
	"## My own section\nkeep me\n",
}

func checkHumanKept(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, k := range humanKept {
		if !strings.Contains(string(data), k) {
			t.Errorf("%s lost %q:\n%s", what, k, data)
		}
	}
}

// Every engine write of a person's entry keeps what the engine does not
// own: comments, unknown keys with their values, the body's own text.
func TestFidelityOfEngineWrites(t *testing.T) {
	files := func() map[string]string {
		return map[string]string{
			"a/b/human.md": humanEntry,
			"a/b/other.md": "---\ntitle: Other\nrelated: [a/b/human.md]\n---\n\n## Narrative\nOther text.\n",
			"a/c/src.md":   "---\n# the source's own remark\ntitle: Src\nowner: bob\nextra: kept\n---\n\n## Narrative\nSource text.\n",
		}
	}
	upd := api.Operation{Type: "UPDATE", Path: "a/b/human.md", Reason: "r",
		Content: api.Content{Narrative: &api.Narrative{Text: "Retries happen, three times."}}}
	for _, tc := range []struct {
		name string
		ops  []api.Operation
		path string // where the person's entry is after the operations
	}{
		{"UPDATE", []api.Operation{upd}, "a/b/human.md"},
		{"UPSERT", []api.Operation{{Type: "UPSERT", Path: "a/b/human.md", Reason: "r",
			Content: api.Content{Tags: []string{"billing"}}}}, "a/b/human.md"},
		{"MERGE into it", []api.Operation{{Type: "MERGE", Path: "a/c/src.md", MergeTarget: "a/b/human.md", Reason: "r"}}, "a/b/human.md"},
		{"MOVE of an entry it links to", []api.Operation{{Type: "MOVE", Path: "a/b/other.md", To: "a/c", Reason: "r"}}, "a/b/human.md"},
		{"MOVE, then UPDATE", []api.Operation{{Type: "MOVE", Path: "a/b/human.md", To: "a/c", Reason: "r"},
			{Type: "UPDATE", Path: "a/c/human.md", Reason: "r", Content: api.Content{Tags: []string{"x"}}}}, "a/c/human.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, files())
			for _, op := range tc.ops {
				mustSucceed(t, one(t, e, op))
			}
			data, err := e.fs.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			checkHumanKept(t, tc.name, data)
		})
	}
}

// A MERGE keeps the source's comments (after the target's keys) and
// unknown keys in the target.
func TestMergeKeepsSourceComments(t *testing.T) {
	e := newEnv(t, map[string]string{
		"a/b/dst.md": "---\ntitle: Dst\n---\n\n## Narrative\nTarget.\n",
		"a/c/src.md": "---\n# the source's own remark\ntitle: Src\nextra: kept # really\n---\n\n## Narrative\nSource.\n",
	})
	mustSucceed(t, one(t, e, api.Operation{Type: "MERGE", Path: "a/c/src.md", MergeTarget: "a/b/dst.md", Reason: "r"}))
	d := e.entry(t, "a/b/dst.md")
	want := []tree.KeyValue{{Value: " a/c/src.md had title: Src"}, {Value: " the source's own remark"}, {Value: " really"}}
	if !slices.Equal(d.Comments, want) || !slices.Contains(d.Extra, tree.KeyValue{Key: "extra", Value: "kept"}) {
		t.Errorf("merged comments %q, extra %q", d.Comments, d.Extra)
	}
}

// A MERGE whose source has a different value for an unknown key the
// target also has keeps the target's and writes the source's as a
// comment, rather than dropping it.
func TestMergeKeepsSourceValueOfSharedKey(t *testing.T) {
	e := newEnv(t, map[string]string{
		"a/b/dst.md": "---\ntitle: Dst\nowner: alice\nteam: billing\n---\n\n## Narrative\nTarget.\n",
		"a/c/src.md": "---\ntitle: Src\nowner: bob\nteam: billing\n---\n\n## Narrative\nSource.\n",
	})
	mustSucceed(t, one(t, e, api.Operation{Type: "MERGE", Path: "a/c/src.md", MergeTarget: "a/b/dst.md", Reason: "r"}))
	data, _ := e.fs.ReadFile("a/b/dst.md")
	if !strings.Contains(string(data), "owner: alice\nteam: billing\n# a/c/src.md had title: Src\n# a/c/src.md had owner: bob\n---\n") {
		t.Errorf("merged:\n%s", data)
	}
}

// An UPDATE of a file that does not parse (a person's YAML slip,
// "title: Foo: bar") replaces it with a sound entry but keeps its whole
// text, fenced, below; a file that is not UTF-8 is refused, since its
// text cannot be kept as written.
func TestUpdateOfUnparseableKeepsItsText(t *testing.T) {
	note := "---\ntitle: Foo: bar\n---\n\nMy long careful notes.\n\n## Heading of mine\n```\ncode\n```\n"
	e := newEnv(t, map[string]string{
		"a/b/slip.md":   note,
		"a/b/latin1.md": "caf\xe9 notes\n",
	})
	a := one(t, e, api.Operation{Type: "UPDATE", Path: "a/b/slip.md", Content: api.Content{Tags: []string{"x"}}, Reason: "tag it"})
	mustSucceed(t, a)
	if !strings.Contains(a.Message, "replaced an unparseable file") || !strings.Contains(a.Message, "Text before this update") {
		t.Errorf("message %q", a.Message)
	}
	data, _ := e.fs.ReadFile("a/b/slip.md")
	if !strings.Contains(string(data), "## Text before this update\n````\n"+note+"````\n") {
		t.Errorf("the person's text is not kept:\n%s", data)
	}
	if en := e.entry(t, "a/b/slip.md"); !slices.Equal(en.Tags, []string{"x"}) {
		t.Errorf("tags %v", en.Tags)
	}
	a = one(t, e, api.Operation{Type: "UPDATE", Path: "a/b/latin1.md", Content: api.Content{Tags: []string{"x"}}, Reason: "tag it"})
	if a.Status != api.StatusFailed || !strings.Contains(a.Message, "not valid UTF-8") {
		t.Errorf("applied %+v", a)
	}
	if data, _ := e.fs.ReadFile("a/b/latin1.md"); string(data) != "caf\xe9 notes\n" {
		t.Errorf("latin1.md changed: %q", data)
	}
}

// A MERGE keeps the source's own title and summary, which the target's
// replace, as comments of the merged entry.
func TestMergeKeepsSourceTitleAndSummary(t *testing.T) {
	e := newEnv(t, map[string]string{
		"a/b/dst.md":  "---\ntitle: Retry policy\nsummary: Invoices are retried.\n---\n\n## Narrative\nTarget.\n",
		"a/c/src.md":  "---\ntitle: Dunning schedule\nsummary: Reminders go out on days 1, 3 and 7.\n---\n\n## Narrative\nSource.\n",
		"a/c/same.md": "---\ntitle: Retry policy\n---\n\n## Narrative\nSame title.\n",
	})
	mustSucceed(t, one(t, e, api.Operation{Type: "MERGE", Path: "a/c/src.md", MergeTarget: "a/b/dst.md", Reason: "r"}))
	mustSucceed(t, one(t, e, api.Operation{Type: "MERGE", Path: "a/c/same.md", MergeTarget: "a/b/dst.md", Reason: "r"}))
	data, _ := e.fs.ReadFile("a/b/dst.md")
	want := "# a/c/src.md had title: Dunning schedule\n# a/c/src.md had summary: Reminders go out on days 1, 3 and 7.\n---\n"
	if !strings.Contains(string(data), want) || strings.Contains(string(data), "same.md had") {
		t.Errorf("merged:\n%s", data)
	}
}

// stepClock moves a minute forward at every reading, as operations do.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { c.t = c.t.Add(time.Minute); return c.t }

// Text a person writes under "## Reason" survives the next write: an
// UPDATE, UPSERT or MERGE keeps, under "## Earlier reasons", a reason the
// audit log does not show the engine writing, and replaces one it does, so
// that an entry the agent keeps updating does not grow.
func TestWritesKeepReasonsTheEngineDidNotWrite(t *testing.T) {
	e := newEnv(t, nil)
	e.c.Clock = &stepClock{t: tNow}
	upd := func(c *Curator, p, reason string) {
		t.Helper()
		a := c.Apply([]api.Operation{{Type: "UPSERT", Path: p, Title: "X", Content: api.Content{Tags: []string{reason}}, Reason: reason}}).Applied[0]
		mustSucceed(t, a)
	}
	earlier := func(p string) string {
		t.Helper()
		for _, s := range e.entry(t, p).Other {
			if s.Heading == EarlierReasons {
				return s.Body
			}
		}
		return ""
	}
	edit := func(p, from, to string) {
		t.Helper()
		data, _ := e.fs.ReadFile(p)
		if !strings.Contains(string(data), from) {
			t.Fatalf("%s lacks %q:\n%s", p, from, data)
		}
		if err := e.fs.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1))); err != nil {
			t.Fatal(err)
		}
	}

	// The engine's own reasons are replaced.
	upd(e.c, "a/b/x.md", "first")
	upd(e.c, "a/b/x.md", "second")
	upd(e.c, "a/b/x.md", "third")
	if got := earlier("a/b/x.md"); got != "" {
		t.Fatalf("the engine's reasons were kept: %q", got)
	}
	// An edit elsewhere in the entry leaves the engine's reason its own.
	edit("a/b/x.md", "## Reason\n", "## Narrative\nA person's note.\n\n## Reason\n")
	upd(e.c, "a/b/x.md", "fourth")
	if got := earlier("a/b/x.md"); got != "" {
		t.Fatalf("kept %q after an edit of another section", got)
	}
	// A person's reason is kept, once.
	prose := "We chose nightly retries after the March outage.\n\nAsk Alice before changing it."
	edit("a/b/x.md", "## Reason\nfourth\n", "## Reason\n"+prose+"\n")
	upd(e.c, "a/b/x.md", "fifth")
	upd(e.c, "a/b/x.md", "sixth")
	if got := earlier("a/b/x.md"); got != prose {
		t.Fatalf("earlier reasons %q, want the person's", got)
	}
	if en := e.entry(t, "a/b/x.md"); en.Reason != "sixth" || en.Narrative.Text != "A person's note." {
		t.Fatalf("reason %q narrative %q", en.Reason, en.Narrative.Text)
	}

	// A moved entry keeps its record; a later session reads it from the log,
	// rotated or not, and sees what another session appended meanwhile.
	upd(e.c, "a/b/y.md", "y first")
	mustSucceed(t, one(t, e, api.Operation{Type: "MOVE", Path: "a/b/y.md", To: "a/c/y.md", Reason: "tidy"}))
	if err := e.fs.Rename(AuditPath, ".arbor/"+RotatedAuditName(tNow.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	later := &Curator{FS: e.fs, Clock: e.c.Clock, Catalog: load(t, e.fs)}
	upd(later, "a/c/y.md", "y second")
	upd(later, "a/c/y.md", "y third") // the session now holds the current log
	other := &Curator{FS: e.fs, Clock: e.c.Clock, Catalog: load(t, e.fs)}
	upd(other, "a/b/z.md", "z first")
	later.Catalog = load(t, e.fs)
	upd(later, "a/b/z.md", "z second")
	if got := earlier("a/c/y.md") + earlier("a/b/z.md"); got != "" {
		t.Fatalf("the engine's reasons were kept: %q", got)
	}

	// A MERGE keeps the reasons of both entries that the engine did not write.
	e.fs.WriteFile("a/d/src.md", []byte("---\ntitle: Src\n---\n\n## Reason\nwritten by hand\n\n## Narrative\nSource.\n"))
	later.Catalog = load(t, e.fs)
	a := later.Apply([]api.Operation{{Type: "MERGE", Path: "a/d/src.md", MergeTarget: "a/b/z.md", Reason: "merge"}}).Applied[0]
	mustSucceed(t, a)
	if got := earlier("a/b/z.md"); got != "written by hand" {
		t.Fatalf("merged earlier reasons %q", got)
	}
}
