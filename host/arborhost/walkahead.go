package arborhost

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/arbormem/arbor/core/host"
)

// A walk's answers are listed ahead: while the module reads the records
// of one fs_walk answer, the next ones are listed on other threads, each
// the answer the module's next call would get (walkChunk with the same
// folder, resume point and size), made a little earlier. The walk was
// never a snapshot (it spans its calls), so an answer listed before its
// call says what one listed at the call could have said; a write, removal
// or rename in the tree through r drops them, so that the module sees its
// own changes as before. An open spends about a third of its time in the
// walk (the system's listings and descriptions of every file), which then
// overlaps the module's reading; the host starts it as it sends the module
// an open (WalkAhead), whose restore of the index and the catalog comes
// before its walk.

// aheadBytes bounds what a walk listed ahead holds: 90 of the module's
// answers of 256 KiB, about 630,000 entries. The listing must not wait for
// the module while it restores its catalog and index, or it becomes the
// open's last step: at 1M entries, with 4 answers ahead, the listing
// stopped 150 ms into a restore of 1.7 s, and the module then waited 2.6 s
// for it. Held well below the headroom the CLI gives its heap during an
// open (openHeadroom, host/cmd/arbor): a collection stops the world until
// the module next calls the host, which with 64 MiB ahead took 961 ms.
const aheadBytes = 24 << 20

// aheadDepth is how many answers of size bytes aheadBytes holds.
func aheadDepth(size int) int { return max(1, aheadBytes/answerCap(size)) }

// answerCap is the capacity of an answer buffer of max bytes: its last
// folder is appended before it is found not to fit, and a buffer of max
// bytes grew to twice that at every answer.
func answerCap(size int) int { return min(size, 1<<20) + 16<<10 }

// walkAhead is a walk being listed ahead, answer by answer.
type walkAhead struct {
	dir  string
	max  int
	next string // the after of the first answer not taken
	// answers holds the answers listed, in order; closed after the last
	// (the walk over, an error, or a record larger than max).
	answers chan walkAnswer
	stop    chan struct{}
}

// walkAnswer is what walkChunk returned.
type walkAnswer struct {
	out  []byte
	need int
	more string
	err  error
}

// WalkAhead starts listing the walk of dir as fs_walk answers of max bytes,
// for a module about to walk it (an open walks the root in answers of 256
// KiB, wasm/hostfs.go): calls that ask for them take them, any other call
// drops them.
func (r *RootFS) WalkAhead(dir string, max int) {
	r.startAhead(dir, "", max)
}

// startAhead lists the walk of dir from after ahead, in place of what was:
// from its start on several threads when the process has them (listSplit),
// else answer after answer as the module's calls would (walkChunk).
func (r *RootFS) startAhead(dir, after string, max int) {
	a := &walkAhead{dir: dir, max: max, next: after, answers: make(chan walkAnswer, aheadDepth(max)), stop: make(chan struct{})}
	r.setAhead(a)
	if n := min(runtime.GOMAXPROCS(0), maxWalkers); after == "" && n > 1 {
		go r.listSplit(a, n)
		return
	}
	go func() {
		defer close(a.answers)
		for {
			var b walkAnswer
			b.out, b.need, b.more, b.err = r.walkChunk(r.answerBuf(max), dir, after, max)
			if !a.send(b) || b.more == "" {
				return
			}
			after = b.more
		}
	}()
}

// send puts b after the answers listed, unless the walk ahead was stopped.
func (a *walkAhead) send(b walkAnswer) bool {
	select {
	case a.answers <- b:
		return true
	case <-a.stop:
		return false
	}
}

// A walk listed ahead from its start is split: the describing of every
// file (an fstatat each, about 2.2 µs a file on a tree of 100,000, most of
// the walk) is spread over the process's threads, since the open's other
// thread, the module's, needs one only while it restores its catalog and
// index, and about a third of one afterwards. One thread lists the walk's
// folder and its sub-folders, in the walk's order; each folder below them
// (in a tree of Domain > Topic > …, a topic) is a unit, whose whole tree a
// worker walks as the walk would (walker.descend and next, on the frames
// of its folders above, shared: floor), into records; the records are
// packed into answers of max bytes in the walk's order, the same bytes as
// walkChunk's answers (TestWalkListedAheadInPieces).

// walkPiece is a part of a walk, in its order: records, and what the walk
// met listing them, where it met it: the folders it left out (each before
// the record at), then the error that ended it.
type walkPiece struct {
	recs     []byte   // records, as fs_walk answers hold them
	ends     []int    // where each record ends in recs
	dirs     []string // each record's folder
	leftOuts []leftOutFolder
	err      error
	done     chan struct{} // closed when the piece is complete
}

// add appends the record of the folder rel listed as list by w.
func (w *walker) add(p *walkPiece, rel string, list []host.DirEntry) {
	w.made++
	p.recs = host.AppendWalkRecord(p.recs, rel, list)
	p.ends = append(p.ends, len(p.recs))
	p.dirs = append(p.dirs, rel)
}

// pieceFreeList holds the pieces packed, for the listing to use again: at
// 1M entries, pieces made anew for each unit were 60 MB for the collector
// in an open, whose collection then stopped the world for a second
// (aheadBytes).
type pieceFreeList chan *walkPiece

// get returns an empty piece, not done.
func (l pieceFreeList) get() *walkPiece {
	select {
	case p := <-l:
		return p
	default:
		return &walkPiece{done: make(chan struct{})}
	}
}

// put takes back the piece p, packed.
func (l pieceFreeList) put(p *walkPiece) {
	p.recs, p.ends, p.dirs, p.leftOuts, p.err = p.recs[:0], p.ends[:0], p.dirs[:0], p.leftOuts[:0], nil
	p.done = make(chan struct{})
	select {
	case l <- p:
	default:
	}
}

// walkUnit is a folder whose tree a worker walks into its piece.
type walkUnit struct {
	above []walkFrame // the folders above it: the walk's and the one between
	name  string
	id    folderID
	link  bool
	piece *walkPiece
	wg    *sync.WaitGroup // of the units sharing above's open folders
}

// maxWalkers bounds the workers of a split walk: each holds the open
// folders of its unit's path, and eight would list a million files (2.5 s
// of CPU here) in about a fifth of the 1.6 s the module takes to restore
// their index and catalog.
const maxWalkers = 8

// piecesAhead is how many pieces are listed ahead of the packing at most.
const piecesAhead = 64

// listSplit lists the walk of a.dir from its start into a's answers with
// n workers.
func (r *RootFS) listSplit(a *walkAhead, n int) {
	defer close(a.answers)
	// quit ends the listing and the workers when the packing ends, for
	// whatever reason: the walk stopped, an error, a record too large.
	quit := make(chan struct{})
	defer close(quit)
	pieces := make(chan *walkPiece, piecesAhead)
	units := make(chan walkUnit)
	for range n {
		go r.walkUnits(units, quit)
	}
	spare := make(pieceFreeList, piecesAhead+n+1)
	go r.splitWalk(a.dir, pieces, units, spare, quit)
	out, last := r.answerBuf(a.max), ""
	for p := range pieces {
		select {
		case <-p.done:
		case <-a.stop:
			return
		}
		// What walkChunk's calls would have met, in their order: each
		// folder left out before the record after it is considered, an
		// error after the records listed before it.
		lo, start := p.leftOuts, 0
		said := func(i int) {
			for ; len(lo) > 0 && lo[0].at <= i; lo = lo[1:] {
				r.leftOut(lo[0].rel, lo[0].why)
			}
		}
		for i, end := range p.ends {
			said(i)
			rec := p.recs[start:end]
			start = end
			if len(out)+len(rec) > a.max {
				if len(out) == 0 {
					a.send(walkAnswer{out: out, need: len(rec)})
					return
				}
				if !a.send(walkAnswer{out: out, more: last + "/"}) {
					return
				}
				if out = r.answerBuf(a.max); len(rec) > a.max {
					a.send(walkAnswer{out: out, need: len(rec)})
					return
				}
			}
			out, last = append(out, rec...), p.dirs[i]
		}
		said(len(p.ends))
		if p.err != nil {
			a.send(walkAnswer{out: out[:0], err: p.err})
			return
		}
		spare.put(p)
	}
	select {
	case <-a.stop:
	default:
		a.send(walkAnswer{out: out})
	}
}

// splitWalk lists the walk's folder and its sub-folders into pieces, in
// the walk's order, and each folder below them as a unit whose piece
// follows its parent's.
func (r *RootFS) splitWalk(dir string, pieces chan<- *walkPiece, units chan<- walkUnit, spare pieceFreeList, quit <-chan struct{}) {
	defer close(pieces)
	defer close(units)
	w := walker{r: r, reuse: true, scratch: new(walkScratch), leftOuts: new([]leftOutFolder)}
	defer w.close()
	emit := func(p *walkPiece) bool {
		select {
		case pieces <- p:
			return true
		case <-quit:
			return false
		}
	}
	// one is a piece of what this thread listed itself: a folder (ok), an
	// error, or folders left out.
	one := func(rel string, list []host.DirEntry, ok bool, err error) *walkPiece {
		p := spare.get()
		p.err = err
		if ok && err == nil {
			w.add(p, rel, list)
		}
		p.leftOuts, *w.leftOuts, w.made = *w.leftOuts, nil, 0
		close(p.done)
		return p
	}
	list, err := w.start(dir, true)
	if !emit(one(dir, list, err == nil, err)) || err != nil {
		return
	}
	root := w.stack[0]
	for i := root.lo; i < root.hi; i++ {
		rel, list, ok, err := w.descend(w.subs[i], true)
		if ok || err != nil || len(*w.leftOuts) > 0 {
			if !emit(one(rel, list, ok, err)) || err != nil {
				return
			}
		}
		if !ok {
			continue
		}
		top := w.stack[1]
		above := []walkFrame{root, top}
		var wg sync.WaitGroup
		for j := top.lo; j < top.hi; j++ {
			s := w.subs[j]
			u := walkUnit{above: above, name: strings.Clone(w.name(s)), id: s.id, link: s.link,
				piece: spare.get(), wg: &wg}
			wg.Add(1)
			if emit(u.piece) {
				select {
				case units <- u:
					continue
				case <-quit:
				}
			}
			wg.Done()
			break
		}
		wg.Wait() // the units' walks are over before their folders are closed
		w.pop()
		select {
		case <-quit:
			return
		default:
		}
	}
}

// walkUnits walks units' trees into their pieces until there are no more.
func (r *RootFS) walkUnits(units <-chan walkUnit, quit <-chan struct{}) {
	w := &walker{r: r, reuse: true, scratch: new(walkScratch)}
	for u := range units {
		w.walkUnit(u, quit)
		close(u.piece.done)
		u.wg.Done()
	}
}

// walkUnit walks u's tree into its piece, on the frames of the folders
// above it, until the walk is over or quit.
func (w *walker) walkUnit(u walkUnit, quit <-chan struct{}) {
	p := u.piece
	w.stack = append(w.stack[:0], u.above...)
	w.floor, w.leftOuts, w.made = len(w.stack), &p.leftOuts, 0
	defer func() {
		w.close()
		w.leftOuts = nil
	}()
	w.addSub(u.name, u.id, u.link)
	rel, list, ok, err := w.descend(w.subs[len(w.subs)-1], true)
	for ; ok && err == nil; rel, list, ok, err = w.next() {
		w.add(p, rel, list)
		select {
		case <-quit:
			return
		default:
		}
	}
	p.err = err
}

// walkAnswer answers fs_walk(dir, after) of at most max bytes: the answer
// listed ahead when it is the one asked for, else one listed now, after
// which the walk's next answers are listed ahead.
func (r *RootFS) walkAnswer(dir, after string, max int) ([]byte, int, error) {
	r.aheadMu.Lock()
	a := r.ahead
	r.ahead = nil
	r.aheadMu.Unlock()
	if a != nil && a.dir == dir && a.next == after && a.max == max {
		if b, ok := <-a.answers; ok {
			if b.more != "" {
				a.next = b.more
				r.aheadMu.Lock()
				if r.ahead == nil {
					r.ahead, a = a, nil
				}
				r.aheadMu.Unlock()
			}
			if a != nil {
				close(a.stop)
			}
			return b.out, b.need, b.err
		}
	}
	if a != nil {
		close(a.stop)
	}
	out, need, more, err := r.walkChunk(r.answerBuf(max), dir, after, max)
	if err == nil && more != "" {
		r.startAhead(dir, more, max)
	}
	return out, need, err
}

// dropAhead stops listing ahead, before r changes the tree at the paths
// (a path in a dot-folder such as .arbor/ changes no walk).
func (r *RootFS) dropAhead(paths ...string) {
	if slices.ContainsFunc(paths, walked) {
		r.setAhead(nil)
	}
}

// setAhead makes a the walk listed ahead (nil: none), stopping the one it
// replaces.
func (r *RootFS) setAhead(a *walkAhead) {
	r.aheadMu.Lock()
	old := r.ahead
	r.ahead = a
	r.aheadMu.Unlock()
	if old != nil {
		close(old.stop)
	}
}

// walked reports whether the walks see the path p: none of its names
// starts with ".".
func walked(p string) bool {
	return !strings.HasPrefix(p, ".") && !strings.Contains(p, "/.")
}
