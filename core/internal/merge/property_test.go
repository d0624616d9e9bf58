package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// randomEntry is an entry of a few tags, lines and facts drawn from small
// pools, so that two edits of it often touch the same things.
func randomEntry(r *rand.Rand) *tree.Entry {
	e := &tree.Entry{
		Path:      "eng/topic/entry.md",
		Title:     "Entry",
		Summary:   fmt.Sprintf("summary %d", r.IntN(3)),
		CreatedAt: time.Date(2025, 1, 1+r.IntN(20), 0, 0, 0, 0, time.UTC),
		UpdatedAt: time.Date(2025, 2, 1+r.IntN(20), 0, 0, 0, 0, time.UTC),
		Reason:    "first",
	}
	for i := range 6 {
		if r.IntN(2) == 0 {
			e.Tags = append(e.Tags, fmt.Sprintf("tag%d", i))
		}
	}
	var lines []string
	for i := range 4 + r.IntN(6) {
		lines = append(lines, fmt.Sprintf("line %d of the base", i))
	}
	e.Narrative.Text = strings.Join(lines, "\n")
	for i := range r.IntN(4) {
		e.Facts = append(e.Facts, api.Fact{Subject: fmt.Sprintf("s%d", i), Statement: fmt.Sprintf("fact %d holds", i)})
	}
	return e
}

// randomEdit changes a copy of e in one to four ways; tag names the lines
// and facts it adds, so that they can be looked for in a merge.
func randomEdit(r *rand.Rand, e *tree.Entry, tag string) *tree.Entry {
	n := e.Clone()
	for k := range 1 + r.IntN(4) {
		lines := strings.Split(n.Narrative.Text, "\n")
		switch r.IntN(8) {
		case 0:
			i := r.IntN(len(lines) + 1)
			lines = slices.Insert(lines, i, fmt.Sprintf("added by %s #%d", tag, k))
		case 1:
			if len(lines) > 1 {
				i := r.IntN(len(lines))
				lines = slices.Delete(lines, i, i+1)
			}
		case 2:
			i := r.IntN(len(lines))
			lines[i] = fmt.Sprintf("changed by %s #%d", tag, k)
		case 3:
			n.Tags = append(n.Tags, fmt.Sprintf("tag-%s-%d", tag, k))
		case 4:
			if len(n.Tags) > 0 {
				n.Tags = slices.Delete(n.Tags, 0, 1)
			}
		case 5:
			n.Facts = append(n.Facts, api.Fact{Subject: tag, Statement: fmt.Sprintf("fact added by %s #%d", tag, k)})
		case 6:
			if len(n.Facts) > 0 {
				i := r.IntN(len(n.Facts))
				n.Facts = slices.Delete(n.Facts, i, i+1)
			}
		case 7:
			n.Summary = fmt.Sprintf("summary %d", r.IntN(3))
		}
		n.Narrative.Text = strings.Join(lines, "\n")
	}
	n.UpdatedAt = n.UpdatedAt.Add(time.Duration(r.IntN(48)) * time.Hour)
	n.Reason = "edit by " + tag
	return n
}

func contentOf(t *testing.T, p api.MergeParams) (api.MergedFile, int) {
	t.Helper()
	res, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Path == p.Files[0].Path {
			return f, res.Conflicts
		}
	}
	t.Fatalf("no result for %s", p.Files[0].Path)
	return api.MergedFile{}, 0
}

// added are the lines of after that before does not have.
func added(before, after []byte) []string {
	var out []string
	for _, l := range strings.Split(string(after), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "---" && !strings.Contains(string(before), l) {
			out = append(out, l)
		}
	}
	return out
}

func TestMergeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 2026))
	const p = "eng/topic/entry.md"
	conflicts := 0
	for round := range 400 {
		base := randomEntry(r)
		x, y := randomEdit(r, base, "ours"), randomEdit(r, base, "theirs")
		bb, xb, yb := tree.Render(base), tree.Render(x), tree.Render(y)
		one := func(base, ours, theirs []byte) (api.MergedFile, int) {
			return contentOf(t, api.MergeParams{Files: []api.MergeFile{{Path: p, Base: &base, Ours: &ours, Theirs: &theirs}}})
		}

		// Identical sides, or one side unchanged: the other side, as it is.
		for _, c := range [][3][]byte{{bb, xb, xb}, {xb, xb, yb}, {xb, yb, xb}} {
			if f, _ := one(c[0], c[1], c[2]); !bytes.Equal(*f.Content, c[1+btoi(bytes.Equal(c[0], c[1]))]) {
				t.Fatalf("round %d: a one-sided merge changed the side it took", round)
			}
		}

		f, n := one(bb, xb, yb)
		e := parse(t, f)
		if (n > 0) != e.Conflicted() {
			t.Fatalf("round %d: %d conflicts reported, conflict section %v", round, n, e.Conflicted())
		}
		conflicts += n
		// Nothing either side added is lost: every line is in the entry or
		// in its conflict section.
		for _, side := range [][]byte{xb, yb} {
			for _, l := range added(bb, side) {
				if strings.HasPrefix(l, "updatedAt:") || strings.HasPrefix(l, "- **s") || l == "## Facts" || l == "## Narrative" {
					continue // updatedAt: the latest wins; a fact's line: by statement
				}
				if strings.HasPrefix(l, "tags:") {
					for _, tg := range strings.Split(strings.Trim(strings.TrimPrefix(l, "tags:"), " []"), ", ") {
						if strings.HasPrefix(tg, "tag-") && !slices.Contains(e.Tags, tg) {
							t.Fatalf("round %d: tag %s added by one side is lost", round, tg)
						}
					}
					continue
				}
				l = strings.TrimPrefix(l, "summary: ") // a conflict block holds the value
				if !bytes.Contains(*f.Content, []byte(l)) {
					t.Fatalf("round %d: the line %q one side added is lost:\nbase\n%s\nours\n%s\ntheirs\n%s\nmerged\n%s", round, l, bb, xb, yb, *f.Content)
				}
			}
		}
		// Without a conflict, the sides can be swapped.
		if n == 0 {
			g, m := one(bb, yb, xb)
			if m != 0 || !bytes.Equal(*g.Content, *f.Content) {
				t.Fatalf("round %d: not symmetric:\n%s\nswapped\n%s", round, *f.Content, *g.Content)
			}
		}
		// Merging the merge with either side again changes nothing more.
		if again, _ := one(xb, *f.Content, *f.Content); !bytes.Equal(*again.Content, *f.Content) {
			t.Fatalf("round %d: not idempotent", round)
		}
	}
	if conflicts == 0 {
		t.Fatal("no round had a conflict: the edits are too far apart to test one")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
