package catalog

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

func memTree(t *testing.T, files map[string]string) *host.MemFS {
	t.Helper()
	fs := host.NewMemFS()
	for p, s := range files {
		if err := fs.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// Names that differ only in case or Unicode form are one name on Windows
// and macOS: Load reports each group once, files and folders alike, and
// loads every file of it.
func TestLoadReportsTwins(t *testing.T) {
	fs := memTree(t, map[string]string{
		"Projects/Plan.md":            "# Plan\n",
		"projects/roadmap.md":         "# Roadmap\n",
		"notes/café.md":               "# composed\n",
		"notes/cafe\u0301.md":         "# decomposed\n",
		"notes/Café.md":               "# capital\n",
		"notes/retry_policy.md":       "# one\n",
		"notes/retry policy.md":       "# not a twin: a space is not an underscore\n",
		"eng/billing/Logo.png":        "png",
		"eng/billing/logo.PNG":        "png",
		"eng/billing/invoice.md":      "# Invoice\n",
		".obsidian/x.md":              "",
		".Obsidian/x.md":              "",
		"eng/billing/sub/context.md":  "# Sub\n",
		"eng/billing/Sub/notes.md":    "# Notes\n",
		"eng/straße/a.md":             "# a\n",
		"eng/strasse/b.md":            "# b: not a twin of straße\n",
		"eng/billing/sub/Context.md":  "# a note named Context\n",
		"eng/billing/sub/context.MD":  "# and another\n",
		"eng/billing/ok/different.md": "# d\n",
	})
	cat, _, warns, err := Load(fs, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, w := range warns {
		if w.Kind != api.WarnTwins {
			t.Errorf("unexpected warning %+v", w)
			continue
		}
		if w.Path != w.Paths[0] || !strings.Contains(w.Message, "differ only in") {
			t.Errorf("warning %+v", w)
		}
		got = append(got, w.Paths)
	}
	want := [][]string{
		{"Projects", "projects"},
		{"eng/billing/Logo.png", "eng/billing/logo.PNG"},
		{"eng/billing/Sub", "eng/billing/sub"},
		{"eng/billing/sub/Context.md", "eng/billing/sub/context.MD", "eng/billing/sub/context.md"},
		{"notes/Café.md", "notes/cafe\u0301.md", "notes/café.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("twins\n got %q\nwant %q", got, want)
	}
	for _, p := range []string{"Projects/Plan.md", "projects/roadmap.md", "notes/café.md", "notes/cafe\u0301.md", "notes/Café.md"} {
		if _, ok := cat.Get(p); !ok {
			t.Errorf("%s not loaded", p)
		}
	}
	for _, w := range warns {
		switch w.Path {
		case "Projects":
			if !strings.Contains(w.Message, `"Projects" and "projects" differ only in case`) {
				t.Errorf("message %q", w.Message)
			}
		case "notes/Café.md":
			if !strings.Contains(w.Message, "case and Unicode form") {
				t.Errorf("message %q", w.Message)
			}
		}
	}
	// Unicode form alone.
	_, _, warns, err = Load(memTree(t, map[string]string{"a/é.md": "x", "a/e\u0301.md": "y"}), 1<<20)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0].Message, "differ only in Unicode form") {
		t.Errorf("warnings %+v, %v", warns, err)
	}
}

// Spellings knows every stamped file and the folders above it, and stays
// in step as files are stamped and forgotten.
func TestSpellings(t *testing.T) {
	fs := memTree(t, map[string]string{
		"Projects/Plan.md":    "# Plan\n",
		"projects/roadmap.md": "# Roadmap\n",
		"notes/a.md":          "# a\n",
	})
	cat, _, _, err := Load(fs, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	check := func(p string, want ...string) {
		t.Helper()
		if got := cat.Spellings(p); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("Spellings(%q) = %q, want %q", p, got, want)
		}
	}
	check("PROJECTS", "Projects", "projects")
	check("projects/plan.md", "Projects/Plan.md")
	check("Notes/A.md", "notes/a.md")
	check("nope")
	cat.SetStamp("Notes/b.md", "k")
	check("notes", "Notes", "notes")
	check("notes/B.md", "Notes/b.md")
	cat.SetStamp("Notes/b.md", "k2") // a rewrite counts once
	cat.Forget("Notes/b.md")
	check("notes", "notes")
	check("notes/b.md")
	cat.Forget("projects/roadmap.md")
	check("projects", "Projects")
	// A clone builds its own.
	cl := cat.Clone()
	cl.Forget("notes/a.md")
	if got := cl.Spellings("notes"); len(got) != 0 {
		t.Errorf("clone: %q", got)
	}
	check("notes", "notes")
}

// Spellings agrees with the definition, every known path folded and
// compared, over random trees of plain and odd names (capitals, composed
// and decomposed accents, the Kelvin sign) stamped and forgotten, whether
// its index was built before the changes or after.
func TestSpellingsAsTheOracle(t *testing.T) {
	names := []string{"a", "A", "k", "K", "\u212a", "caf\u00e9", "cafe\u0301", "Caf\u00e9", "notes", "Notes", "x.md", "X.md", "k.md", "\u212a.md"}
	rng := rand.New(rand.NewPCG(16, 7))
	randomPath := func() string {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = names[rng.IntN(len(names))]
		}
		return strings.Join(parts, "/")
	}
	for round := range 40 {
		cat := New()
		stamped := map[string]bool{}
		if round%2 == 0 {
			cat.Spellings("") // built first, then kept in step
		}
		for range 60 {
			p := randomPath()
			if stamped[p] && rng.IntN(3) == 0 {
				cat.Forget(p)
				delete(stamped, p)
				continue
			}
			cat.SetStamp(p, "k")
			stamped[p] = true
		}
		known := map[string]bool{}
		for p := range stamped {
			for q := p; q != ""; q = parentDir(q) {
				known[q] = true
			}
		}
		for range 50 {
			p := randomPath()
			var want []string
			for q := range known {
				if tree.FoldKey(q) == tree.FoldKey(p) {
					want = append(want, q)
				}
			}
			slices.Sort(want)
			if got := cat.Spellings(p); !slices.Equal(got, want) {
				t.Fatalf("round %d: Spellings(%q) = %q, want %q", round, p, got, want)
			}
		}
	}
}
