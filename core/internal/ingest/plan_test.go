package ingest

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/tree"
)

// memory stands in for a memory root: the catalog the planner reads and the
// manifest it keeps, changed by applying operations the way the engine's
// curate path would (rendered to markdown and parsed back).
type memory struct {
	t   *testing.T
	cat *catalog.Catalog
	man *Manifest
}

func newMemory(t *testing.T) *memory {
	return &memory{t: t, cat: catalog.New(), man: NewManifest()}
}

// planner returns the planner of one call, as Run makes it.
func (m *memory) planner(opts api.IngestOptions) *Planner {
	return &Planner{Manifest: m.man, Catalog: m.cat, Options: opts}
}

// put writes an entry into the catalog through the codec.
func (m *memory) put(e *tree.Entry) {
	m.t.Helper()
	parsed, err := tree.ParseEntry(e.Path, tree.Render(e))
	if err != nil {
		m.t.Fatalf("ParseEntry(%s): %v", e.Path, err)
	}
	m.cat.Put(parsed)
}

// note writes an entry the user wrote by hand.
func (m *memory) note(path string) {
	m.put(&tree.Entry{Path: path, Title: "mine", Reason: "written by hand", Narrative: api.Narrative{Text: "my own words"}})
}

// apply applies ops in order; the ops at the indices in fail fail and
// change nothing.
func (m *memory) apply(ops []api.Operation, fail ...int) []curate.Applied {
	m.t.Helper()
	out := make([]curate.Applied, len(ops))
	for i, op := range ops {
		out[i] = curate.Applied{Applied: api.Applied{Type: op.Type, Path: op.Path, Status: api.StatusSuccess}}
		if slices.Contains(fail, i) {
			out[i].Status = api.StatusFailed
			continue
		}
		switch op.Type {
		case api.OpDelete:
			m.cat.Delete(op.Path)
		default:
			_, exists := m.cat.Get(op.Path)
			out[i].Created = !exists
			m.put(&tree.Entry{Path: op.Path, Title: op.Title, Reason: op.Reason, RawConcept: *op.Content.RawConcept, Narrative: *op.Content.Narrative})
		}
	}
	return out
}

// ingest plans one file, applies its operations and records the outcome.
func (m *memory) ingest(pl *Planner, f api.SourceFile, fail ...int) FilePlan {
	m.t.Helper()
	fp, err := pl.Plan(f)
	if err != nil {
		m.t.Fatalf("Plan(%s): %v", f.Name, err)
	}
	pl.Record(fp, m.apply(fp.Ops, fail...))
	return fp
}

// opList renders the operations of a plan as "TYPE path".
func opList(fp FilePlan) []string {
	var out []string
	for _, op := range fp.Ops {
		out = append(out, op.Type+" "+op.Path)
	}
	return out
}

func md(name, content string) api.SourceFile { return api.SourceFile{Name: name, Content: content} }

const (
	notesV1 = "{\"title\":\"Alpha\",\"text\":\"a\"}\n{\"title\":\"Beta\",\"text\":\"b\"}\n{\"title\":\"Gamma\",\"text\":\"c\"}\n"
	// Beta's text changes, Gamma goes, Delta comes (at Gamma's lines).
	notesV2 = "{\"title\":\"Alpha\",\"text\":\"a\"}\n{\"title\":\"Beta\",\"text\":\"b changed\"}\n{\"title\":\"Delta\",\"text\":\"d\"}\n"
)

func TestPlanNewFile(t *testing.T) {
	m := newMemory(t)
	f := md("notes.jsonl", notesV1)
	fp, err := m.planner(api.IngestOptions{}).Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	if fp.Name != "notes.jsonl" || fp.Format != api.FormatJSONL || fp.Status != api.IngestAdded || fp.Pieces != 3 || fp.Unchanged != 0 {
		t.Errorf("got name %q format %s status %s pieces %d unchanged %d, want notes.jsonl jsonl added 3 0", fp.Name, fp.Format, fp.Status, fp.Pieces, fp.Unchanged)
	}
	// The operations are the pieces' own, in document order, with their hashes.
	pieces, _, _ := Split(f, api.IngestOptions{})
	if len(fp.Ops) != len(pieces) || len(fp.Hashes) != len(pieces) {
		t.Fatalf("%d ops, %d hashes, want %d", len(fp.Ops), len(fp.Hashes), len(pieces))
	}
	for i, pc := range pieces {
		if want := pc.Operation(api.OpAdd, "ingest notes.jsonl"); !reflect.DeepEqual(fp.Ops[i], want) {
			t.Errorf("op %d =\n%#v\nwant\n%#v", i, fp.Ops[i], want)
		}
		if fp.Hashes[i] != pc.Hash() {
			t.Errorf("hash %d = %s, want %s", i, fp.Hashes[i], pc.Hash())
		}
	}
	// Planning writes nothing: the manifest changes only through Record.
	if len(m.man.Sources) != 0 {
		t.Errorf("Plan changed the manifest: %v", m.man.Sources)
	}

	pl := m.planner(api.IngestOptions{})
	pl.Reason = "import of the wiki"
	fp, _ = pl.Plan(f)
	for _, op := range fp.Ops {
		if op.Reason != "import of the wiki" {
			t.Errorf("%s: reason %q, want the planner's", op.Path, op.Reason)
		}
	}
}

// A file goes through its life: added, unchanged, changed, rewritten with
// the same pieces, unchanged again.
func TestPlanLifecycle(t *testing.T) {
	m := newMemory(t)
	steps := []struct {
		name      string
		content   string
		status    string
		ops       []string
		pieces    int
		unchanged int
	}{
		{"new", notesV1, api.IngestAdded,
			[]string{"ADD data/notes/alpha.md", "ADD data/notes/beta.md", "ADD data/notes/gamma.md"}, 3, 0},
		{"same again", notesV1, api.IngestUnchanged, nil, 3, 3},
		// ADD and UPDATE in document order, then the DELETEs.
		{"changed", notesV2, api.IngestUpdated,
			[]string{"UPDATE data/notes/beta.md", "ADD data/notes/delta.md", "DELETE data/notes/gamma.md"}, 3, 1},
		// Other bytes, same pieces: nothing to write, the new hash is recorded.
		{"CRLF", strings.ReplaceAll(notesV2, "\n", "\r\n"), api.IngestUnchanged, nil, 3, 3},
		{"CRLF again", strings.ReplaceAll(notesV2, "\n", "\r\n"), api.IngestUnchanged, nil, 3, 3},
		{"emptied", "", api.IngestUpdated,
			[]string{"DELETE data/notes/alpha.md", "DELETE data/notes/beta.md", "DELETE data/notes/delta.md"}, 0, 0},
	}
	for _, st := range steps {
		f := md("notes.jsonl", st.content)
		pl := m.planner(api.IngestOptions{})
		fp := m.ingest(pl, f)
		if fp.Status != st.status || !reflect.DeepEqual(opList(fp), st.ops) || fp.Pieces != st.pieces || fp.Unchanged != st.unchanged {
			t.Fatalf("%s: got status %s ops %q pieces %d unchanged %d, want %s %q %d %d",
				st.name, fp.Status, opList(fp), fp.Pieces, fp.Unchanged, st.status, st.ops, st.pieces, st.unchanged)
		}
		// After each step the manifest holds the source's hash and one
		// entry per piece, and every recorded entry is in the tree.
		rec := m.man.Sources["notes.jsonl"]
		if rec == nil || rec.Hash != SourceHash(f, api.IngestOptions{}) || rec.Format != api.FormatJSONL || len(rec.Entries) != st.pieces {
			t.Fatalf("%s: manifest record %+v", st.name, rec)
		}
		for path, h := range rec.Entries {
			if _, ok := m.cat.Get(path); !ok || h == "" {
				t.Errorf("%s: %s recorded (hash %q) but not in the tree", st.name, path, h)
			}
		}
	}
	if got := m.cat.Paths(); len(got) != 0 {
		t.Errorf("entries left after emptying the file: %q", got)
	}
}

// Without a manifest (lost, or never written) a source's entries are found
// by their provenance and rewritten once; an entry the user took over is
// not the source's any more.
func TestPlanLostManifest(t *testing.T) {
	m := newMemory(t)
	m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", notesV1))
	m.man = NewManifest()
	// The user rewrote Alpha: its reason is no longer the ingest's.
	alpha, _ := m.cat.Get("data/notes/alpha.md")
	took := alpha.Clone()
	took.Reason = "rewritten by hand"
	m.cat.Put(took)

	fp, err := m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", notesV2))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		// Alpha's place is the user's now: the piece goes next to it.
		"ADD data/notes/alpha_2.md",
		// The others are the source's: rewritten, since their hash is unknown.
		"UPDATE data/notes/beta.md",
		"ADD data/notes/delta.md",
		"DELETE data/notes/gamma.md",
	}
	if fp.Status != api.IngestUpdated || !reflect.DeepEqual(opList(fp), want) || fp.Unchanged != 0 {
		t.Errorf("got status %s ops %q unchanged %d, want updated %q 0", fp.Status, opList(fp), fp.Unchanged, want)
	}

	// With nothing of the source in the tree it is a new source.
	m2 := newMemory(t)
	m2.note("data/notes/beta.md")
	fp, _ = m2.planner(api.IngestOptions{}).Plan(md("notes.jsonl", notesV1))
	if fp.Status != api.IngestAdded || !reflect.DeepEqual(opList(fp), []string{"ADD data/notes/alpha.md", "ADD data/notes/beta_2.md", "ADD data/notes/gamma.md"}) {
		t.Errorf("new source beside a note: status %s ops %q", fp.Status, opList(fp))
	}
}

// A manifest older than the tree (a write of it was lost): an entry the
// source wrote since, its provenance naming the source, is updated, not
// added again, which curate would refuse on every ingest from then on.
func TestPlanStaleManifest(t *testing.T) {
	m := newMemory(t)
	m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", "{\"title\":\"Alpha\",\"text\":\"a\"}\n"))
	saved, err := ParseManifest(m.man.Encode())
	if err != nil {
		t.Fatal(err)
	}
	m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", "{\"title\":\"Alpha\",\"text\":\"a\"}\n{\"title\":\"Beta\",\"text\":\"b\"}\n"))
	m.man = saved
	fp, err := m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", "{\"title\":\"Alpha\",\"text\":\"a\"}\n{\"title\":\"Beta\",\"text\":\"b\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"UPDATE data/notes/beta.md"}; !reflect.DeepEqual(opList(fp), want) || fp.Unchanged != 1 {
		t.Errorf("ops %q unchanged %d, want %q and alpha unchanged", opList(fp), fp.Unchanged, want)
	}
}

// A piece never takes a path that is not its source's: a note of the
// user's, another source's entry (by the manifest or by provenance), or a
// path an earlier file of the same call took.
func TestPlanTakenPaths(t *testing.T) {
	tests := []struct {
		name  string
		setup func(m *memory)
		want  []string
	}{
		{"free", func(m *memory) {},
			[]string{"ADD data/notes/alpha.md", "ADD data/notes/beta.md", "ADD data/notes/gamma.md"}},
		{"a note of the user's", func(m *memory) { m.note("data/notes/beta.md") },
			[]string{"ADD data/notes/alpha.md", "ADD data/notes/beta_2.md", "ADD data/notes/gamma.md"}},
		{"two notes", func(m *memory) { m.note("data/notes/beta.md"); m.note("data/notes/beta_2.md") },
			[]string{"ADD data/notes/alpha.md", "ADD data/notes/beta_3.md", "ADD data/notes/gamma.md"}},
		{"another source's by the manifest, even if missing", func(m *memory) {
			m.man.Sources["other.md"] = &SourceRecord{Hash: "h", Entries: map[string]string{"data/notes/gamma.md": "x"}}
		}, []string{"ADD data/notes/alpha.md", "ADD data/notes/beta.md", "ADD data/notes/gamma_2.md"}},
		{"another source's by provenance", func(m *memory) {
			m.put(&tree.Entry{Path: "data/notes/alpha.md", Title: "Alpha", Reason: "ingest other.md", RawConcept: api.RawConcept{Files: []string{"other.md"}}})
		}, []string{"ADD data/notes/alpha_2.md", "ADD data/notes/beta.md", "ADD data/notes/gamma.md"}},
		{"a broken file", func(m *memory) { m.cat.MarkBroken("data/notes/alpha.md", errors.New("bad YAML")) },
			[]string{"ADD data/notes/alpha_2.md", "ADD data/notes/beta.md", "ADD data/notes/gamma.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemory(t)
			tc.setup(m)
			fp, err := m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", notesV1))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(opList(fp), tc.want) {
				t.Errorf("ops %q, want %q", opList(fp), tc.want)
			}
		})
	}
	t.Run("an earlier file of the call", func(t *testing.T) {
		// notes.csv has the topic of notes.jsonl; its row names its piece Alpha.
		m := newMemory(t)
		pl := m.planner(api.IngestOptions{})
		if fp, _ := pl.Plan(md("notes.csv", "title\nAlpha\n")); !reflect.DeepEqual(opList(fp), []string{"ADD data/notes/alpha.md"}) {
			t.Fatalf("notes.csv: %q", opList(fp))
		}
		fp, _ := pl.Plan(md("notes.jsonl", notesV1))
		if want := []string{"ADD data/notes/alpha_2.md", "ADD data/notes/beta.md", "ADD data/notes/gamma.md"}; !reflect.DeepEqual(opList(fp), want) {
			t.Errorf("ops %q, want %q", opList(fp), want)
		}
	})
}

// When a changed file is planned, a recorded entry that is gone from the
// tree is added again, a broken one is rewritten, and a piece that went
// away is deleted only if something is there to delete.
func TestPlanMissingAndBrokenEntries(t *testing.T) {
	m := newMemory(t)
	m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", notesV1))
	m.cat.Delete("data/notes/alpha.md")
	m.cat.Delete("data/notes/gamma.md")
	m.cat.Delete("data/notes/beta.md")
	m.cat.MarkBroken("data/notes/beta.md", errors.New("unclosed front matter"))

	// Same bytes: the source's hash matches and nothing is looked at.
	fp, _ := m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", notesV1))
	if fp.Status != api.IngestUnchanged || len(fp.Ops) != 0 {
		t.Fatalf("same file: status %s ops %q, want unchanged and none", fp.Status, opList(fp))
	}
	// Changed bytes, same Alpha and Beta, no Gamma.
	fp, _ = m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", "{\"title\":\"Alpha\",\"text\":\"a\"}\n{\"title\":\"Beta\",\"text\":\"b\"}\n"))
	want := []string{"ADD data/notes/alpha.md", "UPDATE data/notes/beta.md"}
	if fp.Status != api.IngestUpdated || !reflect.DeepEqual(opList(fp), want) || fp.Unchanged != 0 || fp.Pieces != 2 {
		t.Errorf("got status %s ops %q unchanged %d pieces %d, want updated %q 0 2", fp.Status, opList(fp), fp.Unchanged, fp.Pieces, want)
	}
}

func TestPlanOptionsChange(t *testing.T) {
	m := newMemory(t)
	f := md("notes.jsonl", notesV1)
	m.ingest(m.planner(api.IngestOptions{}), f)

	// ContextTurns nil is 2, and MaxSourceBytes does not shape entries.
	for _, opts := range []api.IngestOptions{{ContextTurns: intp(2)}, {MaxSourceBytes: 1 << 20}} {
		if fp, _ := m.planner(opts).Plan(f); fp.Status != api.IngestUnchanged || len(fp.Ops) != 0 {
			t.Errorf("options %+v: status %s ops %q, want unchanged", opts, fp.Status, opList(fp))
		}
	}
	// Another domain moves every entry: the new ones first, then the DELETEs, sorted.
	fp := m.ingest(m.planner(api.IngestOptions{Domain: "Wiki"}), f)
	want := []string{
		"ADD wiki/notes/alpha.md", "ADD wiki/notes/beta.md", "ADD wiki/notes/gamma.md",
		"DELETE data/notes/alpha.md", "DELETE data/notes/beta.md", "DELETE data/notes/gamma.md",
	}
	if fp.Status != api.IngestUpdated || !reflect.DeepEqual(opList(fp), want) {
		t.Errorf("Domain Wiki: status %s ops %q, want updated %q", fp.Status, opList(fp), want)
	}
	if got := m.cat.Paths(); !reflect.DeepEqual(got, []string{"wiki/notes/alpha.md", "wiki/notes/beta.md", "wiki/notes/gamma.md"}) {
		t.Errorf("tree after the move: %q", got)
	}
}

func TestPlanBadInput(t *testing.T) {
	tests := []struct {
		file   api.SourceFile
		format api.Format
	}{
		{md("x.json", "{"), api.FormatJSON},
		{md("c.json", `{"haystack_sessions": 1}`), api.FormatChat},
		{md("../x.md", "x"), api.FormatMarkdown},
		{md("n.txt", "a\x00b"), api.FormatText},
	}
	for _, tc := range tests {
		t.Run(tc.file.Name, func(t *testing.T) {
			m := newMemory(t)
			fp, err := m.planner(api.IngestOptions{}).Plan(tc.file)
			if !errors.Is(err, api.ErrBadInput) {
				t.Errorf("err = %v, want ErrBadInput", err)
			}
			if fp.Name != tc.file.Name || fp.Format != tc.format || fp.Ops != nil || fp.Pieces != 0 {
				t.Errorf("plan %+v, want name %q format %s and nothing planned", fp, tc.file.Name, tc.format)
			}
		})
	}
}

func TestSourceHash(t *testing.T) {
	f := md("notes.jsonl", notesV1)
	base := SourceHash(f, api.IngestOptions{})
	if len(base) != 32 {
		t.Fatalf("SourceHash = %q, want 32 hex digits", base)
	}
	tests := []struct {
		name    string
		f       api.SourceFile
		opts    api.IngestOptions
		changes bool
	}{
		{"same", f, api.IngestOptions{}, false},
		{"content", md("notes.jsonl", notesV2), api.IngestOptions{}, true},
		{"one byte", md("notes.jsonl", notesV1+" "), api.IngestOptions{}, true},
		{"domain", f, api.IngestOptions{Domain: "wiki"}, true},
		{"context turns 0", f, api.IngestOptions{ContextTurns: intp(0)}, true},
		{"context turns 3", f, api.IngestOptions{ContextTurns: intp(3)}, true},
		{"context turns 2 is the default", f, api.IngestOptions{ContextTurns: intp(2)}, false},
		{"name is not content", md("moved/notes.jsonl", notesV1), api.IngestOptions{}, false},
		{"size limit does not shape entries", f, api.IngestOptions{MaxSourceBytes: 10}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SourceHash(tc.f, tc.opts) != base; got != tc.changes {
				t.Errorf("hash changed = %v, want %v", got, tc.changes)
			}
		})
	}
	// Negative context turns are zero.
	if SourceHash(f, api.IngestOptions{ContextTurns: intp(-4)}) != SourceHash(f, api.IngestOptions{ContextTurns: intp(0)}) {
		t.Error("ContextTurns -4 and 0 hash differently")
	}
}

// Record keeps what was written; what failed is retried by the next ingest.
func TestRecord(t *testing.T) {
	m := newMemory(t)
	f := md("notes.jsonl", notesV1)
	pl := m.planner(api.IngestOptions{})
	fp, _ := pl.Plan(f)
	// Beta's ADD fails; the applied list is one short (Gamma counts as failed).
	applied := m.apply(fp.Ops, 1)[:2]
	if n := pl.Record(fp, applied); n != 2 {
		t.Errorf("Record = %d failed, want 2", n)
	}
	rec := m.man.Sources["notes.jsonl"]
	if rec.Hash != "" || !reflect.DeepEqual(rec.Entries, map[string]string{"data/notes/alpha.md": fp.Hashes[0]}) {
		t.Fatalf("after failures: %+v", rec)
	}
	// The next ingest retries what failed and keeps what was written.
	// Gamma was written though its result did not come back (a crash
	// between the write and the record): it is there, naming this source,
	// so it is updated rather than added again.
	fp = m.ingest(m.planner(api.IngestOptions{}), f)
	if fp.Status != api.IngestUpdated || !reflect.DeepEqual(opList(fp), []string{"ADD data/notes/beta.md", "UPDATE data/notes/gamma.md"}) || fp.Unchanged != 1 {
		t.Errorf("retry: status %s ops %q unchanged %d", fp.Status, opList(fp), fp.Unchanged)
	}
	if rec := m.man.Sources["notes.jsonl"]; rec.Hash != SourceHash(f, api.IngestOptions{}) || len(rec.Entries) != 3 {
		t.Errorf("after the retry: %+v", rec)
	}

	// A failed UPDATE keeps the old hash and a failed DELETE keeps the
	// entry recorded, so that both are planned again.
	old := maps.Clone(m.man.Sources["notes.jsonl"].Entries)
	pl = m.planner(api.IngestOptions{})
	fp, _ = pl.Plan(md("notes.jsonl", notesV2))
	if got := opList(fp); !reflect.DeepEqual(got, []string{"UPDATE data/notes/beta.md", "ADD data/notes/delta.md", "DELETE data/notes/gamma.md"}) {
		t.Fatalf("v2 ops %q", got)
	}
	if n := pl.Record(fp, m.apply(fp.Ops, 0, 2)); n != 2 {
		t.Errorf("Record = %d failed, want 2", n)
	}
	rec = m.man.Sources["notes.jsonl"]
	if rec.Hash != "" || rec.Entries["data/notes/beta.md"] != old["data/notes/beta.md"] ||
		rec.Entries["data/notes/gamma.md"] != old["data/notes/gamma.md"] || rec.Entries["data/notes/delta.md"] != fp.Hashes[1] {
		t.Errorf("after failed UPDATE and DELETE: %+v (before %v)", rec, old)
	}
	fp = m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", notesV2))
	if got := opList(fp); !reflect.DeepEqual(got, []string{"UPDATE data/notes/beta.md", "DELETE data/notes/gamma.md"}) {
		t.Errorf("retry of v2: ops %q", got)
	}

	// An unchanged file planned nothing: Record changes nothing.
	before := string(m.man.Encode())
	fp, _ = m.planner(api.IngestOptions{}).Plan(md("notes.jsonl", notesV2))
	if n := m.planner(api.IngestOptions{}).Record(fp, nil); n != 0 || string(m.man.Encode()) != before {
		t.Errorf("Record of an unchanged file: %d failed, manifest changed %v", n, string(m.man.Encode()) != before)
	}
}

// pruneMemory holds three ingested sources: notes/a.md (two entries),
// notes/b.md and other/c.md.
func pruneMemory(t *testing.T) *memory {
	m := newMemory(t)
	pl := m.planner(api.IngestOptions{})
	m.ingest(pl, md("notes/a.jsonl", "{\"title\":\"One\",\"text\":\"1\"}\n{\"title\":\"Two\",\"text\":\"2\"}\n"))
	m.ingest(pl, md("notes/b.jsonl", "{\"title\":\"Three\",\"text\":\"3\"}\n"))
	m.ingest(pl, md("other/c.csv", "name\nfour\n"))
	return m
}

func TestPrune(t *testing.T) {
	type plan struct {
		name, status string
		format       api.Format
		ops          []string
	}
	aPlan := plan{"notes/a.jsonl", api.IngestRemoved, api.FormatJSONL, []string{"DELETE data/notes_a/one.md", "DELETE data/notes_a/two.md"}}
	bPlan := plan{"notes/b.jsonl", api.IngestRemoved, api.FormatJSONL, []string{"DELETE data/notes_b/three.md"}}
	cPlan := plan{"other/c.csv", api.IngestRemoved, api.FormatCSV, []string{"DELETE data/other_c/four.md"}}
	tests := []struct {
		name     string
		prefixes []string
		keep     map[string]bool
		setup    func(m *memory)
		want     []plan
	}{
		{"every source", []string{""}, nil, nil, []plan{aPlan, bPlan, cPlan}},
		{"a prefix", []string{"notes/"}, nil, nil, []plan{aPlan, bPlan}},
		{"a prefix and a kept source", []string{"notes/"}, map[string]bool{"notes/b.jsonl": true}, nil, []plan{aPlan}},
		{"two prefixes", []string{"other/", "notes/a"}, nil, nil, []plan{aPlan, cPlan}},
		{"no prefix", nil, nil, nil, nil},
		{"nothing under the prefix", []string{"archive/"}, nil, nil, nil},
		// An entry the user took over stays; the source is still removed.
		{"an entry taken over", []string{"notes/a"}, nil, func(m *memory) {
			e, _ := m.cat.Get("data/notes_a/one.md")
			e = e.Clone()
			e.Reason = "kept by hand"
			m.cat.Put(e)
		}, []plan{{"notes/a.jsonl", api.IngestRemoved, api.FormatJSONL, []string{"DELETE data/notes_a/two.md"}}}},
		// An entry gone from the tree is not deleted again; a record with
		// nothing left still plans its removal.
		{"entries already gone", []string{"notes/b"}, nil, func(m *memory) { m.cat.Delete("data/notes_b/three.md") },
			[]plan{{"notes/b.jsonl", api.IngestRemoved, api.FormatJSONL, nil}}},
		// Without a record the provenance finds the source.
		{"a source only the provenance knows", []string{"lost/"}, nil, func(m *memory) {
			m.put(&tree.Entry{Path: "documents/lost/x.md", Title: "x", Reason: "ingest lost/x.txt", RawConcept: api.RawConcept{Files: []string{"lost/x.txt"}}})
		}, []plan{{"lost/x.txt", api.IngestRemoved, api.FormatText, []string{"DELETE documents/lost/x.md"}}}},
		// Without a record and with nothing of its own left, nothing is planned.
		{"provenance of an entry another source owns", []string{"lost/"}, nil, func(m *memory) {
			m.put(&tree.Entry{Path: "data/notes_b/three.md", Title: "x", Reason: "ingest lost/y.md", RawConcept: api.RawConcept{Files: []string{"lost/y.md"}}})
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := pruneMemory(t)
			if tc.setup != nil {
				tc.setup(m)
			}
			var got []plan
			for _, fp := range m.planner(api.IngestOptions{}).Prune(tc.prefixes, tc.keep) {
				got = append(got, plan{fp.Name, fp.Status, fp.Format, opList(fp)})
				if fp.Pieces != 0 || fp.Unchanged != 0 {
					t.Errorf("%s: pieces %d unchanged %d, want 0 0", fp.Name, fp.Pieces, fp.Unchanged)
				}
				for _, op := range fp.Ops {
					if op.Reason != "prune "+fp.Name {
						t.Errorf("%s: reason %q, want %q", op.Path, op.Reason, "prune "+fp.Name)
					}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Prune(%q, %v) =\n%v\nwant\n%v", tc.prefixes, tc.keep, got, tc.want)
			}
		})
	}
}

// A renamed source: the new name is planned, the old one pruned in the
// same call, with the planner's reason.
func TestPruneAfterPlan(t *testing.T) {
	m := pruneMemory(t)
	pl := m.planner(api.IngestOptions{})
	pl.Reason = "sync"
	// notes/b.jsonl is renamed notes/b2.jsonl with the same content: its piece
	// lands at another topic, so the old one is pruned.
	if _, err := pl.Plan(md("notes/b2.jsonl", "{\"title\":\"Three\",\"text\":\"3\"}\n")); err != nil {
		t.Fatal(err)
	}
	plans := pl.Prune([]string{"notes/"}, map[string]bool{"notes/b2.jsonl": true, "notes/a.jsonl": true})
	if len(plans) != 1 || plans[0].Name != "notes/b.jsonl" || !reflect.DeepEqual(opList(plans[0]), []string{"DELETE data/notes_b/three.md"}) {
		t.Fatalf("plans %+v", plans)
	}
	if r := plans[0].Ops[0].Reason; r != "sync" {
		t.Errorf("reason %q, want the planner's", r)
	}
}

// Recording a removal drops the source once every DELETE succeeded, and
// keeps the entries whose DELETE failed (with no hash, so that a re-added
// file is planned again).
func TestRecordRemoval(t *testing.T) {
	m := pruneMemory(t)
	aHashes := maps.Clone(m.man.Sources["notes/a.jsonl"].Entries)
	pl := m.planner(api.IngestOptions{})
	plans := pl.Prune([]string{"notes/"}, nil)
	if len(plans) != 2 {
		t.Fatalf("%d plans", len(plans))
	}
	if n := pl.Record(plans[0], m.apply(plans[0].Ops, 1)); n != 1 {
		t.Errorf("notes/a.jsonl: Record = %d, want 1", n)
	}
	if n := pl.Record(plans[1], m.apply(plans[1].Ops)); n != 0 {
		t.Errorf("notes/b.jsonl: Record = %d, want 0", n)
	}
	if _, ok := m.man.Sources["notes/b.jsonl"]; ok {
		t.Error("notes/b.jsonl still recorded after its removal")
	}
	rec := m.man.Sources["notes/a.jsonl"]
	want := map[string]string{"data/notes_a/two.md": aHashes["data/notes_a/two.md"]}
	if rec == nil || rec.Hash != "" || !reflect.DeepEqual(rec.Entries, want) {
		t.Fatalf("notes/a.jsonl after a failed DELETE: %+v, want entries %v and no hash", rec, want)
	}
	// The next prune retries the failed DELETE only.
	plans = m.planner(api.IngestOptions{}).Prune([]string{"notes/"}, nil)
	if len(plans) != 1 || !reflect.DeepEqual(opList(plans[0]), []string{"DELETE data/notes_a/two.md"}) {
		t.Errorf("retry: %+v", plans)
	}
	// Re-adding the file plans it again, since its hash was dropped.
	fp, _ := m.planner(api.IngestOptions{}).Plan(md("notes/a.jsonl", "{\"title\":\"One\",\"text\":\"1\"}\n{\"title\":\"Two\",\"text\":\"2\"}\n"))
	if fp.Status != api.IngestUpdated || !reflect.DeepEqual(opList(fp), []string{"ADD data/notes_a/one.md"}) || fp.Unchanged != 1 {
		t.Errorf("re-added: status %s ops %q unchanged %d", fp.Status, opList(fp), fp.Unchanged)
	}
}

func TestManifestEncode(t *testing.T) {
	if got, want := string(NewManifest().Encode()), "{\n \"version\": 1,\n \"sources\": {}\n}\n"; got != want {
		t.Errorf("empty manifest = %q, want %q", got, want)
	}
	m := NewManifest()
	m.Sources["b.md"] = &SourceRecord{Hash: "h2", Format: api.FormatMarkdown, Entries: map[string]string{"d/b/z.md": "1", "d/b/a.md": ""}}
	m.Sources["a.json"] = &SourceRecord{Format: api.FormatChat, Entries: map[string]string{}}
	data := m.Encode()
	want := `{
 "version": 1,
 "sources": {
  "a.json": {
   "hash": "",
   "format": "chat",
   "entries": {}
  },
  "b.md": {
   "hash": "h2",
   "format": "markdown",
   "entries": {
    "d/b/a.md": "",
    "d/b/z.md": "1"
   }
  }
 }
}
`
	if string(data) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", data, want)
	}
	back, err := ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, m)
	}
	if again := back.Encode(); string(again) != string(data) {
		t.Errorf("Encode after ParseManifest differs:\n%s", again)
	}
}

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name, data string
		err        string // "" for none
		sources    map[string]*SourceRecord
	}{
		{"no sources", `{"version": 1}`, "", map[string]*SourceRecord{}},
		// A missing version is the current one.
		{"no version", `{"sources": {"a.md": {"hash": "h", "entries": {}}}}`, "", map[string]*SourceRecord{"a.md": {Hash: "h", Entries: map[string]string{}}}},
		{"null sources", `{"version": 1, "sources": null}`, "", map[string]*SourceRecord{}},
		{"null record dropped, null entries made empty", `{"version": 1, "sources": {"a.md": null, "b.md": {"hash": "h"}}}`, "",
			map[string]*SourceRecord{"b.md": {Hash: "h", Entries: map[string]string{}}}},
		{"unknown fields ignored", `{"version": 1, "extra": true, "sources": {"b.md": {"format": "csv", "entries": {"p.md": "x"}, "more": 1}}}`, "",
			map[string]*SourceRecord{"b.md": {Format: api.FormatCSV, Entries: map[string]string{"p.md": "x"}}}},
		{"corrupt", `{"version": 1, "sources": {`, "ingest manifest: unexpected end of JSON input", nil},
		{"not an object", `[]`, "ingest manifest: json: cannot unmarshal array", nil},
		{"wrong type", `{"version": "1"}`, "ingest manifest: json: cannot unmarshal string", nil},
		{"empty", ``, "ingest manifest: unexpected end of JSON input", nil},
		{"other version", `{"version": 2, "sources": {}}`, "ingest manifest: version 2, want 1", nil},
		{"explicit version 0", `{"version": 0, "sources": {}}`, "ingest manifest: version 0, want 1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one starting %q", err, tc.err)
				}
				if m != nil {
					t.Errorf("manifest %+v returned with an error", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != 1 || !reflect.DeepEqual(m.Sources, tc.sources) {
				t.Errorf("got version %d sources %+v, want 1 %+v", m.Version, m.Sources, tc.sources)
			}
		})
	}
}
