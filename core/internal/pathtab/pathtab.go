// Package pathtab holds a table of values keyed by path, for the records
// an open restores by the hundred thousand (the catalog's, the index's
// documents) and then looks up in the order a walk of the tree lists them.
//
// A map by path cost every open one insert per record at restore and one
// look-up per file listed, each a hash of the path (in software under
// WebAssembly) and a probe far apart in memory: about a sixth of an
// unchanged open. Restored records arrive sorted by path, and a walk lists
// the files in nearly that order, so the table keeps its rows in a slice
// in the order they were put: the rows put in path order are found by
// binary search, and a look-up given where the previous one ended (Find's
// hint) compares one path. The few rows put out of order (files added
// within the tree since) are kept in a small map; a map of every path is
// made only once binary searches have cost about as much as making it.
package pathtab

import (
	"iter"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/host"
)

// Table holds a value per path, each in its row, numbered by its slot: the
// slot of a path's row does not change while the row is live (a Put of
// the path replaces its value in place), and no other live row has it.
// Removing a path leaves its row dead, its slot unused, until Compact
// gives the slots anew. The zero Table is empty and ready to use.
type Table[V any] struct {
	rows []row[V]
	// ordered is how many rows, from the first, have strictly increasing
	// paths (dead rows' too, which keep theirs): binary search finds
	// those. late maps the paths of the live rows after them to their
	// slots.
	ordered int
	late    map[string]uint32
	// index maps the path of every live row to its slot, once searches
	// (binary searches since the last Compact) passed a sixteenth of the
	// rows, about what making it costs; nil until then, and late with it.
	index    map[string]uint32
	searches int
	live     int
	gen      uint32
}

type row[V any] struct {
	path string
	val  V
	live bool
}

// Make returns a table ready for n rows and a sixteenth more: a table
// restored whole then takes the files added since, and outgrowing its
// rows copies every one of them (and held both copies at once).
func Make[V any](n int) Table[V] { return Table[V]{rows: make([]row[V], 0, n+n/16+64)} }

// Len returns the number of live rows.
func (t *Table[V]) Len() int { return t.live }

// Slots returns one more than the largest slot given since the last
// Compact: every live slot is below it.
func (t *Table[V]) Slots() int { return len(t.rows) }

// Gen changes when Compact gives the slots anew: marks by slot taken
// before it no longer name the same rows.
func (t *Table[V]) Gen() uint32 { return t.gen }

// Slot returns the slot of p's live row. It counts the search, and may
// make the map of every path: it is not safe alongside any other call, as
// a Put is not.
func (t *Table[V]) Slot(p string) (uint32, bool) {
	if t.index == nil {
		if t.searches++; t.searches > max(len(t.rows)/16, 64) {
			t.buildIndex()
		}
	}
	return t.Peek(p)
}

// Peek is Slot without counting the search: it changes nothing, so
// readers sharing the table (the index's queries) may call it at once.
func (t *Table[V]) Peek(p string) (uint32, bool) {
	if t.index != nil {
		i, ok := t.index[p]
		return i, ok
	}
	i, found := slices.BinarySearchFunc(t.rows[:t.ordered], p, func(r row[V], p string) int { return strings.Compare(r.path, p) })
	if found && t.rows[i].live {
		return uint32(i), true
	}
	j, ok := t.late[p]
	return j, ok
}

// Find is Peek for a caller that looks paths up in about the order of
// the rows: when hint is p's slot, one comparison finds it. A walk passes
// the slot after the one it last found.
func (t *Table[V]) Find(p string, hint uint32) (uint32, bool) {
	if int(hint) < len(t.rows) {
		if r := &t.rows[hint]; r.live && r.path == p {
			return hint, true
		}
	}
	return t.Peek(p)
}

// FindIn is Find of the path of name in the folder dir (host.JoinPath),
// which it makes only when the row at hint does not hold it: a walk gives
// a file's folder and name, and a path made per file was an allocation
// per file. It returns the path, the row's when found.
func (t *Table[V]) FindIn(dir, name string, hint uint32) (string, uint32, bool) {
	if int(hint) < len(t.rows) {
		if r := &t.rows[hint]; r.live && host.IsIn(r.path, dir, name) {
			return r.path, hint, true
		}
	}
	p := host.JoinPath(dir, name)
	i, ok := t.Peek(p)
	return p, i, ok
}

// Get returns the value of p's live row.
func (t *Table[V]) Get(p string) (V, bool) {
	if i, ok := t.Slot(p); ok {
		return t.rows[i].val, true
	}
	var zero V
	return zero, false
}

// Path returns the path of the row at slot i.
func (t *Table[V]) Path(i uint32) string { return t.rows[i].path }

// Live reports whether the row at slot i is live.
func (t *Table[V]) Live(i uint32) bool { return int(i) < len(t.rows) && t.rows[i].live }

// At returns the value of the row at slot i, to read or change in place.
func (t *Table[V]) At(i uint32) *V { return &t.rows[i].val }

// Put sets p's value: in its live row when it has one, else in a new row
// at the end. It returns the row's slot. A table whose slots reached
// math.MaxUint32 is compacted first.
func (t *Table[V]) Put(p string, v V) uint32 {
	// A path after every row's, as a restore puts them, is new: no search.
	after := t.ordered == len(t.rows) && (len(t.rows) == 0 || p > t.rows[len(t.rows)-1].path)
	if !after {
		if i, ok := t.Slot(p); ok {
			t.rows[i].val = v
			return i
		}
	}
	if uint64(len(t.rows)) >= math.MaxUint32 {
		t.Compact()
		after = len(t.rows) == 0 || p > t.rows[len(t.rows)-1].path
	}
	i := uint32(len(t.rows))
	t.rows = append(t.rows, row[V]{path: p, val: v, live: true})
	t.live++
	switch {
	case after:
		t.ordered++
		if t.index != nil {
			t.index[p] = i
		}
	case t.index != nil:
		t.index[p] = i
	default:
		if t.late == nil {
			t.late = map[string]uint32{}
		}
		t.late[p] = i
	}
	return i
}

// Remove removes p's row, if live.
func (t *Table[V]) Remove(p string) {
	i, ok := t.Slot(p)
	if !ok {
		return
	}
	r := &t.rows[i]
	var zero V
	r.val, r.live = zero, false // its path stays: binary search reads it
	t.live--
	if t.index != nil {
		delete(t.index, p)
	} else if int(i) >= t.ordered {
		delete(t.late, p)
	}
}

// buildIndex maps the live rows' paths.
func (t *Table[V]) buildIndex() {
	t.index = make(map[string]uint32, t.live)
	for i := range t.rows {
		if r := &t.rows[i]; r.live {
			t.index[r.path] = uint32(i)
		}
	}
	t.late = nil
}

// Dead returns the number of dead rows, which Compact drops.
func (t *Table[V]) Dead() int { return len(t.rows) - t.live }

// Compact drops the dead rows and gives the live ones slots anew, in path
// order, and changes Gen: marks taken by slot before it are void. With the
// rows in path order again, no map of the paths is kept.
func (t *Table[V]) Compact() {
	rows := make([]row[V], 0, t.live)
	for _, r := range t.rows {
		if r.live {
			rows = append(rows, r)
		}
	}
	if !t.Sorted() {
		slices.SortFunc(rows, func(a, b row[V]) int { return strings.Compare(a.path, b.path) })
	}
	t.rows, t.ordered, t.late, t.index, t.searches = rows, len(rows), nil, nil, 0
	t.gen++
}

// All yields the path and slot of every live row, in slot order.
func (t *Table[V]) All() iter.Seq2[string, uint32] {
	return func(yield func(string, uint32) bool) {
		for i := range t.rows {
			if t.rows[i].live && !yield(t.rows[i].path, uint32(i)) {
				return
			}
		}
	}
}

// Sorted reports whether slot order is path order: All then yields the
// paths sorted.
func (t *Table[V]) Sorted() bool { return t.ordered == len(t.rows) }

// Clone returns a table of the same rows that changes apart from t. The
// values are copied as they are (a pointer in one is shared).
func (t *Table[V]) Clone() Table[V] {
	n := *t
	n.rows = slices.Clone(t.rows)
	n.late, n.index = maps.Clone(t.late), maps.Clone(t.index)
	return n
}

// Marks marks slots of a Table, as a walk that visits some of its rows
// does, as of the table's Gen when the marks were started.
type Marks struct {
	bits []uint64
	gen  uint32
	n    int
}

// NewMarks starts marks of the slots of a table with the given number of
// slots and generation (Slots, Gen).
func NewMarks(slots int, gen uint32) Marks {
	return Marks{bits: make([]uint64, (slots+63)/64), gen: gen}
}

// Mark marks slot i.
func (m *Marks) Mark(i uint32) {
	w := int(i / 64)
	if w >= len(m.bits) {
		m.bits = append(m.bits, make([]uint64, w+1-len(m.bits))...)
	}
	if m.bits[w]&(1<<(i%64)) == 0 {
		m.bits[w] |= 1 << (i % 64)
		m.n++
	}
}

// Marked reports whether slot i is marked.
func (m *Marks) Marked(i uint32) bool {
	w := int(i / 64)
	return w < len(m.bits) && m.bits[w]&(1<<(i%64)) != 0
}

// Count returns the number of slots marked.
func (m *Marks) Count() int { return m.n }

// Gen returns the table generation the marks were started at.
func (m *Marks) Gen() uint32 { return m.gen }
