package pathtab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A table agrees with a map of the same puts and removes, whatever their
// order: every live path is found at the slot it was put in, until a
// Compact, and nothing else is found.
func TestTableAgreesWithMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, 300)
	for i := range paths {
		paths[i] = fmt.Sprintf("d%d/e%03d.md", i%7, i)
	}
	slices.Sort(paths)
	var tab Table[int]
	want := map[string]int{}
	slot := map[string]uint32{}
	check := func(when string) {
		t.Helper()
		if tab.Len() != len(want) {
			t.Fatalf("%s: Len %d, want %d", when, tab.Len(), len(want))
		}
		for _, p := range paths {
			v, ok := tab.Get(p)
			w, wok := want[p]
			if ok != wok || v != w {
				t.Fatalf("%s: Get(%s) = %d %v, want %d %v", when, p, v, ok, w, wok)
			}
			if i, ok := tab.Find(p, uint32(rnd.IntN(tab.Slots()+1))); ok != wok || ok && (i != slot[p] || tab.Path(i) != p || *tab.At(i) != w) {
				t.Fatalf("%s: Find(%s) = %d %v, want slot %d", when, p, i, ok, slot[p])
			}
			if i, ok := tab.Find(p, slot[p]); wok && (!ok || i != slot[p]) {
				t.Fatalf("%s: Find(%s) at its own slot = %d %v", when, p, i, ok)
			}
			dir, name := p[:strings.LastIndexByte(p, '/')], p[strings.LastIndexByte(p, '/')+1:]
			for _, hint := range []uint32{slot[p], slot[p] + 1} {
				if q, i, ok := tab.FindIn(dir, name, hint); q != p || ok != wok || ok && i != slot[p] {
					t.Fatalf("%s: FindIn(%s, %s, %d) = %s %d %v", when, dir, name, hint, q, i, ok)
				}
			}
		}
		var got []string
		for p, i := range tab.All() {
			if !tab.Live(i) || slot[p] != i {
				t.Fatalf("%s: All yields %s at %d, want %d", when, p, i, slot[p])
			}
			got = append(got, p)
		}
		if tab.Sorted() && !slices.IsSorted(got) {
			t.Fatalf("%s: sorted, but All yields %v", when, got)
		}
	}
	// Put in path order, as a restore does: no map is made.
	for i, p := range paths[:200] {
		if i%2 == 1 {
			continue
		}
		slot[p] = tab.Put(p, i)
		want[p] = i
	}
	if !tab.Sorted() || tab.index != nil || tab.late != nil {
		t.Fatal("a table put in path order made a map")
	}
	// A few paths put out of order, as files added within a tree, are
	// mapped alone.
	for i, p := range paths[:7] {
		if i%2 == 1 {
			slot[p] = tab.Put(p, i)
			want[p] = i
		}
	}
	if tab.Sorted() || tab.index != nil || len(tab.late) != 3 {
		t.Fatalf("three paths put out of order: sorted %v, index %v, late %v", tab.Sorted(), tab.index != nil, tab.late)
	}
	check("restored")
	if tab.index == nil {
		t.Fatal("thousands of searches made no map")
	}
	for step := range 3000 {
		p := paths[rnd.IntN(len(paths))]
		switch rnd.IntN(10) {
		case 0, 1, 2:
			tab.Remove(p)
			delete(want, p)
			delete(slot, p)
		case 3:
			gen := tab.Gen()
			tab.Compact()
			if tab.Gen() == gen || tab.Dead() != 0 || !tab.Sorted() {
				t.Fatalf("step %d: compact: gen %d→%d, %d dead, sorted %v", step, gen, tab.Gen(), tab.Dead(), tab.Sorted())
			}
			for q := range slot {
				slot[q], _ = tab.Slot(q)
			}
		default:
			i := tab.Put(p, step)
			if was, ok := slot[p]; ok && was != i {
				t.Fatalf("step %d: %s moved from slot %d to %d", step, p, was, i)
			}
			slot[p] = i
			want[p] = step
		}
		if step%97 == 0 {
			check(fmt.Sprintf("step %d", step))
		}
	}
	check("end")
}

// Marks count what they mark once, and grow past the slots they were
// made for.
func TestMarks(t *testing.T) {
	m := NewMarks(10, 3)
	for _, i := range []uint32{0, 9, 9, 64, 1000} {
		m.Mark(i)
	}
	if m.Count() != 4 || m.Gen() != 3 {
		t.Fatalf("count %d, gen %d", m.Count(), m.Gen())
	}
	for i := range uint32(1100) {
		if want := i == 0 || i == 9 || i == 64 || i == 1000; m.Marked(i) != want {
			t.Fatalf("slot %d marked %v", i, m.Marked(i))
		}
	}
}
