package curate

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"golang.org/x/text/unicode/norm"
)

// vault is a tree as people keep it: an Obsidian-style folder with
// capitals and spaces, a decomposed accent, a folder holding only an
// attachment, and names only Linux can hold.
func vault() map[string]string {
	files := maps.Clone(fixture)
	files["Projects/Plan.md"] = "---\ntitle: Plan\n---\n\n## Narrative\nShip it.\n"
	files["Projects/Roadmap/Q3 Goals.md"] = "# Q3 Goals\n"
	files["Recettes/Cafe\u0301/context.md"] = "# Café\n"
	files["Recettes/Cafe\u0301/Espresso.md"] = "# Espresso\n"
	files["Assets/logo.png"] = "png"
	files["legacy/CON/aux.md"] = "---\ntitle: Aux\n---\n\n## Narrative\nold.\n"
	return files
}

// Created paths are lowercase snake_case and NFC, and land in the folder
// that already exists under another spelling rather than beside it.
func TestCreatedPathsAreNormalised(t *testing.T) {
	cases := []struct {
		name string
		op   api.Operation
		want string
	}{
		{"capitalised folders land in the existing ones", api.Operation{Type: "ADD", Path: "ENG/Billing", Title: "Card Refunds"}, "eng/billing/card_refunds.md"},
		{"new folders are snake_case", api.Operation{Type: "ADD", Path: "Sales Team/Q1 Plans", Title: "Kick-off"}, "sales_team/q1_plans/kick_off.md"},
		{"new folders are NFC", api.Operation{Type: "ADD", Path: "Cafe\u0301s/Me\u0301nu", Title: "Cre\u0300me"}, "cafés/ménu/crème.md"},
		{"a named file is snake_case too", api.Operation{Type: "ADD", Path: "Notes/Journal/Weekly Review.MD"}, "notes/journal/weekly_review.md"},
		{"a name matching an existing folder in its normal form goes there", api.Operation{Type: "ADD", Path: "eng/Billing!", Title: "Dunning"}, "eng/billing/dunning.md"},
		{"an existing capitalised folder keeps its name", api.Operation{Type: "ADD", Path: "projects/roadmap", Title: "Q4 Goals"}, "Projects/Roadmap/q4_goals.md"},
		{"an existing decomposed folder keeps its name", api.Operation{Type: "ADD", Path: "recettes/café", Title: "Latte"}, "Recettes/Cafe\u0301/latte.md"},
		{"a folder holding no entry keeps its name", api.Operation{Type: "ADD", Path: "assets/logos", Title: "Usage"}, "Assets/logos/usage.md"},
		{"given in its existing spelling", api.Operation{Type: "ADD", Path: "Projects/Roadmap", Title: "Q1"}, "Projects/Roadmap/q1.md"},
		{"upsert creates normalised", api.Operation{Type: "UPSERT", Path: "Eng/Billing/Late Fees.md"}, "eng/billing/late_fees.md"},
		{"a note named Context is not the context file", api.Operation{Type: "ADD", Path: "eng/billing/Context.md"}, "eng/billing/context_entry.md"},
		{"nor in a new folder", api.Operation{Type: "ADD", Path: "eng/payments/CONTEXT.MD"}, "eng/payments/context_entry.md"},
		{"into an existing folder Windows cannot hold", api.Operation{Type: "ADD", Path: "legacy/con", Title: "New"}, "legacy/CON/new.md"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, vault())
			tc.op.Reason = "r"
			a := one(t, e, tc.op)
			mustSucceed(t, a)
			if a.Path != tc.want || !a.Created {
				t.Fatalf("path %q created %v, want %q", a.Path, a.Created, tc.want)
			}
			en := e.entry(t, tc.want)
			if _, ok := e.c.Catalog.Get(tc.want); !ok {
				t.Errorf("catalog lacks %s", tc.want)
			}
			if tc.op.Title == "" && !slices.Contains([]string{"Weekly Review", "Late Fees", "Context", "CONTEXT"}, en.Title) {
				t.Errorf("title %q: want the name as given", en.Title)
			}
			// No folder of the tree gained a twin.
			if w := twinsOnDisk(e); len(w) > 0 {
				t.Errorf("twins on disk: %v", w)
			}
		})
	}
}

// twinsOnDisk lists the folders and files of e's tree that fold to one
// name, as a fresh open would report them.
func twinsOnDisk(e *env) []string {
	seen := map[string]string{}
	var out []string
	for p := range treeFiles(e.fs) {
		segs := strings.Split(p, "/")
		for i := range segs {
			q := strings.Join(segs[:i+1], "/")
			k := foldPath(q)
			if o, ok := seen[k]; ok && o != q {
				out = append(out, o+" ~ "+q)
			}
			seen[k] = q
		}
	}
	return out
}

func foldPath(p string) string {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		segs = append(segs, strings.ToLower(s))
	}
	return normNFC(strings.Join(segs, "/"))
}

// Existing entries stay addressable by their exact path, and a path given
// in another case, Unicode form or as the snake_case name the engine would
// make of it finds the one entry it can mean.
func TestExistingPathsResolve(t *testing.T) {
	cases := []struct {
		name string
		op   api.Operation
		want string // the path it applied to
		msg  string
	}{
		{"update by its exact path", api.Operation{Type: "UPDATE", Path: "Projects/Plan.md", Summary: "s"}, "Projects/Plan.md", "updated"},
		{"update in another case", api.Operation{Type: "UPDATE", Path: "PROJECTS/plan.md", Summary: "s"}, "Projects/Plan.md", "updated"},
		{"update by folder and title", api.Operation{Type: "UPDATE", Path: "projects/roadmap", Title: "Q3 Goals", Summary: "s"}, "Projects/Roadmap/Q3 Goals.md", "updated"},
		{"update in another Unicode form", api.Operation{Type: "UPDATE", Path: "recettes/café/espresso.md", Summary: "s"}, "Recettes/Cafe\u0301/Espresso.md", "updated"},
		{"upsert finds the twin", api.Operation{Type: "UPSERT", Path: "projects", Title: "Plan", Summary: "s"}, "Projects/Plan.md", "updated existing"},
		{"update an existing name Windows cannot hold", api.Operation{Type: "UPDATE", Path: "legacy/CON/aux.md", Summary: "s"}, "legacy/CON/aux.md", "updated"},
		{"delete in another case", api.Operation{Type: "DELETE", Path: "projects/plan.md"}, "Projects/Plan.md", "deleted Projects/Plan.md"},
		{"delete without .md", api.Operation{Type: "DELETE", Path: "projects/plan"}, "Projects/Plan.md", "deleted Projects/Plan.md"},
		{"delete a folder in another case", api.Operation{Type: "DELETE", Path: "PROJECTS/roadmap"}, "Projects/Roadmap", "deleted folder Projects/Roadmap: 1 entry"},
		{"merge across spellings", api.Operation{Type: "MERGE", Path: "projects/roadmap/q3 goals.md", MergeTarget: "projects/plan"}, "Projects/Roadmap/Q3 Goals.md", "merged Projects/Roadmap/Q3 Goals.md into Projects/Plan.md"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, vault())
			tc.op.Reason = "r"
			a := one(t, e, tc.op)
			mustSucceed(t, a)
			if a.Path != tc.want || !strings.HasPrefix(a.Message, tc.msg) {
				t.Fatalf("applied %q %q, want %q %q", a.Path, a.Message, tc.want, tc.msg)
			}
			if w := twinsOnDisk(e); len(w) > 0 {
				t.Errorf("twins on disk: %v", w)
			}
		})
	}
}

// Refused: names Windows cannot hold in what would be created, an ADD of
// an entry that exists under another spelling, and a path that could mean
// several twins. Nothing is written.
func TestPathRefusals(t *testing.T) {
	twins := vault()
	twins["Archive/2025/a.md"] = "# a\n"
	twins["ARCHIVE/2025/a.md"] = "# a too\n"
	cases := []struct {
		name  string
		files map[string]string
		op    api.Operation
		want  string
	}{
		{"device folder", nil, api.Operation{Type: "ADD", Path: "CON/x", Title: "y"}, `invalid path "CON/x/y.md": "CON" is a device name Windows reserves`},
		{"device file", nil, api.Operation{Type: "ADD", Path: "eng/billing/aux.md"}, `"aux.md" is a device name Windows reserves`},
		{"device with extension", nil, api.Operation{Type: "ADD", Path: "eng/nul.txt", Title: "y"}, `"nul.txt" is a device name`},
		{"device title", nil, api.Operation{Type: "ADD", Path: "eng/billing", Title: "COM1"}, `"com1.md" is a device name`},
		{"device by upsert", nil, api.Operation{Type: "UPSERT", Path: "eng/Lpt3/x.md"}, `"Lpt3" is a device name`},
		{"colon", nil, api.Operation{Type: "ADD", Path: "eng/a:b", Title: "y"}, `"a:b" holds ':'`},
		{"question mark", nil, api.Operation{Type: "ADD", Path: "eng/billing/why?.md"}, `"why?.md" holds '?'`},
		{"trailing dot", nil, api.Operation{Type: "ADD", Path: "eng/payments./x", Title: "y"}, `"payments." ends in a dot or a space`},
		{"trailing space", nil, api.Operation{Type: "ADD", Path: "eng/payments /x", Title: "y"}, `"payments " ends in a dot or a space`},
		{"no letter", nil, api.Operation{Type: "ADD", Path: "eng/---", Title: "y"}, `"---" has no letter or digit`},
		{"exists in another case", nil, api.Operation{Type: "ADD", Path: "recettes/CAFÉ/espresso.md"}, "already exists: Recettes/Cafe\u0301/Espresso.md"},
		{"exists under its title", nil, api.Operation{Type: "ADD", Path: "projects/roadmap", Title: "q3 goals"}, "already exists: Projects/Roadmap/Q3 Goals.md"},
		{"exists as a named twin", nil, api.Operation{Type: "ADD", Path: "projects/roadmap/q3 GOALS.md"}, "already exists: Projects/Roadmap/Q3 Goals.md"},
		{"ambiguous folder", twins, api.Operation{Type: "ADD", Path: "archive/2025", Title: "c"}, `invalid path "archive/2025/c.md": archive could be any of ARCHIVE, Archive`},
		{"ambiguous entry", twins, api.Operation{Type: "UPDATE", Path: "archive/2025/a.md", Summary: "s"}, "archive/2025/a.md could be any of ARCHIVE/2025/a.md, Archive/2025/a.md"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files
			if files == nil {
				files = vault()
			}
			e := newEnv(t, files)
			before, cat := treeFiles(e.fs), catalogState(e.c.Catalog)
			tc.op.Reason = "r"
			a := one(t, e, tc.op)
			if a.Status != api.StatusFailed || !strings.Contains(a.Message, tc.want) {
				t.Fatalf("got %s %q, want failed %q", a.Status, a.Message, tc.want)
			}
			if d := diffFiles(before, treeFiles(e.fs)); d != "" {
				t.Errorf("tree changed:\n%s", d)
			}
			if catalogState(e.c.Catalog) != cat {
				t.Error("catalog changed")
			}
		})
	}
	// With twins, each spelling is addressable exactly.
	e := newEnv(t, twins)
	mustSucceed(t, one(t, e, api.Operation{Type: "ADD", Path: "ARCHIVE/2025", Title: "c", Reason: "r"}))
	mustSucceed(t, one(t, e, api.Operation{Type: "UPDATE", Path: "Archive/2025/a.md", Summary: "s", Reason: "r"}))
	if _, err := e.fs.ReadFile("ARCHIVE/2025/c.md"); err != nil {
		t.Error(err)
	}
	if e.entry(t, "Archive/2025/a.md").Summary != "s" || e.entry(t, "ARCHIVE/2025/a.md").Summary != "" {
		t.Error("the update went to the wrong twin")
	}
}

// An existing entry is found under a title-derived name even when its
// file name is not snake_case, so ADD and UPDATE with the same input
// address the same file.
func TestAddThenUpdateSameInput(t *testing.T) {
	e := newEnv(t, fixture)
	op := api.Operation{Type: "ADD", Path: "Research/Papers Read/Attention Is All You Need.md", Reason: "r"}
	a := one(t, e, op)
	mustSucceed(t, a)
	want := "research/papers_read/attention_is_all_you_need.md"
	if a.Path != want {
		t.Fatalf("path %q", a.Path)
	}
	if en := e.entry(t, want); en.Title != "Attention Is All You Need" {
		t.Errorf("title %q", en.Title)
	}
	op.Type, op.Summary = "UPDATE", "the transformer paper"
	a = one(t, e, op)
	mustSucceed(t, a)
	if a.Path != want || e.entry(t, want).Summary != "the transformer paper" {
		t.Errorf("update %+v", a)
	}
	op.Type = "ADD"
	if a = one(t, e, op); a.Status != api.StatusFailed || a.Message != "already exists: "+want {
		t.Errorf("second add %+v", a)
	}
	got := slices.Sorted(maps.Keys(treeFiles(e.fs)))
	if n := len(slices.DeleteFunc(got, func(p string) bool { return !strings.HasPrefix(strings.ToLower(p), "research/") })); n != 3 {
		t.Errorf("research holds %d files, want the entry and two context files: %v", n, got)
	}
}

// A note named Context.md is not given a context.md twin.
func TestNoContextTwin(t *testing.T) {
	files := maps.Clone(fixture)
	files["Journal/2026/Context.md"] = "# Context\n\nwhy this journal exists\n"
	e := newEnv(t, files)
	a := one(t, e, api.Operation{Type: "ADD", Path: "journal/2026", Title: "March", Reason: "r"})
	mustSucceed(t, a)
	if a.Path != "Journal/2026/march.md" {
		t.Fatalf("path %q", a.Path)
	}
	if _, err := e.fs.ReadFile("Journal/2026/context.md"); err == nil {
		t.Error("context.md written beside Context.md")
	}
	if _, err := e.fs.ReadFile("Journal/context.md"); err != nil {
		t.Errorf("Journal/context.md: %v", err)
	}
}

func normNFC(s string) string { return norm.NFC.String(s) }
