package arborhost

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"
	"unsafe"

	"github.com/arbormem/arbor/core/host"
)

var _ host.Walker = (*RootFS)(nil)

// A walk (host.Walker, the fs_walk import) lists folders the way ReadDir
// does, but each folder is opened relative to its parent's open folder
// and each file described relative to its folder (walk_linux.go): ReadDir
// checks the whole path of every folder again (resolve), and an open
// lists every folder of the tree. The platform's part is a walkDir: an
// open folder, its listing, and opening a sub-folder.

// subFolder is a folder entry of a listing, to walk. Its name is held in
// the walker's subNames (walker.name).
type subFolder struct {
	at, n int // of the name in subNames
	id    folderID
	link  bool // a symbolic link to a folder inside the root, in .arbor/ (the tree's are not followed)
}

// walkFrame is a folder of the walk's current path, whose sub-folders
// (walker.subs[lo:hi]) are walked in turn.
type walkFrame struct {
	rel          string
	dir          walkDir
	id           folderID
	lo, hi, next int
	names        int // where its sub-folders' names start in subNames
}

// walker is one walk from a folder, depth first in name order. Its open
// folders are those of its current path, no more.
//
// The frames of the path, their sub-folders and the sub-folders' names
// are stacks the walker keeps from one walk to the next (walkChunk's come
// from a pool): an open lists every folder of the tree, ahead of the
// module, and what each listing left behind for the collector was a
// collection at 1M entries that stopped the world, and the listing, for as
// long as the module's compiled code ran without calling the host
// (pauseCollector, host/cmd/arbor).
type walker struct {
	r        *RootFS
	rootRel  string // the walk's first folder
	rootFull string // its OS path, links unresolved
	stack    []walkFrame
	subs     []subFolder
	subNames []byte
	// floor is how many frames at the bottom of the stack are another
	// walker's, shared: a walk of one sub-folder's tree listed ahead by a
	// worker (walkahead.go) does not leave them nor close them.
	floor int
	// leftOuts, when not nil, holds the folders the walker left out, for
	// its caller to record in the walk's order (walkahead.go), rather than
	// at once (RootFS.leftOut).
	leftOuts *[]leftOutFolder
	made     int // records made, for leftOuts
	// reuse is set when the caller is done with each listing before it
	// asks for the next (walkChunk encodes it at once): the listings are
	// then made in the scratch space.
	reuse   bool
	scratch *walkScratch // the platform's
}

func (w *walker) close() {
	for _, f := range w.stack[w.floor:] {
		f.dir.close()
	}
	w.stack, w.subs, w.subNames, w.floor = w.stack[:0], w.subs[:0], w.subNames[:0], 0
}

// addSub adds a sub-folder of the folder being listed.
func (w *walker) addSub(name string, id folderID, link bool) {
	w.subs = append(w.subs, subFolder{at: len(w.subNames), n: len(name), id: id, link: link})
	w.subNames = append(w.subNames, name...)
}

// name is s's name. It shares the bytes of subNames, which a frame's
// sub-folders keep until the frame is left, and no string made from it
// outlives the frame: the path of a folder is a copy (descend).
func (w *walker) name(s subFolder) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&w.subNames[s.at], s.n)
}

// push makes the folder rel, just listed (its sub-folders from lo in
// subs, their names from names in subNames), the innermost of the path.
func (w *walker) push(rel string, d walkDir, id folderID, lo, names int) {
	w.stack = append(w.stack, walkFrame{rel: rel, dir: d, id: id, lo: lo, hi: len(w.subs), next: lo, names: names})
}

// pop leaves the innermost folder of the path.
func (w *walker) pop() {
	f := &w.stack[len(w.stack)-1]
	f.dir.close()
	w.subs, w.subNames = w.subs[:f.lo], w.subNames[:f.names]
	w.stack = w.stack[:len(w.stack)-1]
}

// listSubs lists d (list) and returns where the sub-folders it added
// start, dropping them on an error.
func (w *walker) listSubs(d walkDir, rel string, full bool) (list []host.DirEntry, lo, names int, err error) {
	lo, names = len(w.subs), len(w.subNames)
	if list, err = w.list(d, rel, full); err != nil {
		w.subs, w.subNames = w.subs[:lo], w.subNames[:names]
	}
	return list, lo, names, err
}

// start opens the walk's folder and returns its listing, as ReadDir
// lists it (the same errors), dot-names left out; unless full, only its
// sub-folders are found (resume).
func (w *walker) start(rel string, full bool) ([]host.DirEntry, error) {
	d, id, err := openWalkRoot(w.r, rel)
	if err != nil {
		return nil, err
	}
	w.rootRel, w.rootFull = rel, d.full
	list, lo, names, err := w.listSubs(d, rel, full)
	if err != nil {
		d.close()
		return nil, osError("list", rel, err)
	}
	w.push(rel, d, id, lo, names)
	return list, nil
}

// cycle reports whether id is a folder of the walk's current path: a link
// that leads back up the tree, whose folder is listed but not walked.
func (w *walker) cycle(id folderID) bool {
	for _, f := range w.stack {
		if f.id == id {
			return true
		}
	}
	return false
}

// descend opens the sub-folder s of the innermost folder and lists it
// (its sub-folders alone unless full); ok is false when it is gone
// (removed since its parent was listed) or leads back up the tree.
func (w *walker) descend(s subFolder, full bool) (rel string, list []host.DirEntry, ok bool, err error) {
	top := &w.stack[len(w.stack)-1]
	if w.cycle(s.id) {
		return "", nil, false, nil
	}
	name := w.name(s)
	rel = top.rel + "/" + name
	if top.rel == "" {
		rel = strings.Clone(name)
	}
	if err := checkPath(rel); err != nil {
		// A name the rules refuse: fs_list could not list it either.
		w.leftOut(rel, "the engine refuses its name ("+err.Error()+")")
		return "", nil, false, nil
	}
	d, id, err := top.dir.open(name, s.link)
	if err != nil {
		if gone(err) {
			return "", nil, false, nil
		}
		if errors.Is(err, fs.ErrPermission) {
			// A folder this user may not list (chmod 700 by another, 000)
			// holds nothing the engine can read: left out, where it failed
			// the walk, and with it the open of the whole memory.
			w.leftOut(rel, denied)
			return "", nil, false, nil
		}
		return "", nil, false, osError("list", rel, err)
	}
	if w.cycle(id) { // replaced by a link since the listing
		d.close()
		return "", nil, false, nil
	}
	list, lo, names, err := w.listSubs(d, rel, full)
	if err != nil {
		d.close()
		if gone(err) {
			return "", nil, false, nil
		}
		if errors.Is(err, fs.ErrPermission) {
			w.leftOut(rel, denied)
			return "", nil, false, nil
		}
		return "", nil, false, osError("list", rel, err)
	}
	w.push(rel, d, id, lo, names)
	return rel, list, true, nil
}

// next returns the next folder of the walk and its listing; ok is false
// when the walk is over.
func (w *walker) next() (rel string, list []host.DirEntry, ok bool, err error) {
	for len(w.stack) > w.floor {
		top := &w.stack[len(w.stack)-1]
		if top.next == top.hi {
			w.pop()
			continue
		}
		s := w.subs[top.next]
		top.next++
		if rel, list, ok, err = w.descend(s, true); ok || err != nil {
			return rel, list, ok, err
		}
	}
	return "", nil, false, nil
}

// resume positions a walk from root, started (its sub-folders only),
// just after the folder after (root or below it): its sub-folders come
// next, or, when it is gone or was not walked, what follows it. The
// folders on the way are listed for their sub-folders alone: a folder of
// many files above the point reached is not described again at each
// resumption.
func (w *walker) resume(root, after string) error {
	rest := after
	if root != "" {
		rest = strings.TrimPrefix(strings.TrimPrefix(after, root), "/")
	}
	if rest == "" {
		return nil
	}
	for more := true; more; {
		var name string
		name, rest, more = strings.Cut(rest, "/")
		top := &w.stack[len(w.stack)-1]
		subs := w.subs[top.lo:top.hi]
		i := sort.Search(len(subs), func(i int) bool { return w.name(subs[i]) > name })
		top.next = top.lo + i
		if i == 0 || w.name(subs[i-1]) != name {
			return nil // gone: what follows it comes next
		}
		if _, _, ok, err := w.descend(subs[i-1], false); err != nil || !ok {
			return err
		}
	}
	return nil
}

// gone reports an error of a folder removed during the walk.
func gone(err error) bool {
	return errors.Is(err, host.ErrNotFound) || isGone(err)
}

// denied is why a walk leaves out a folder this user may not list.
const denied = "this user may not list it (permission denied)"

// leftOutFolder is a folder a walk left out, and why; at is how many
// records the walk had made before, where the walk's order is kept
// (walkPiece).
type leftOutFolder struct {
	rel, why string
	at       int
}

// leftOut records that the walk leaves out the folder rel (RootFS.leftOut).
func (w *walker) leftOut(rel, why string) {
	if w.leftOuts != nil {
		*w.leftOuts = append(*w.leftOuts, leftOutFolder{rel: rel, why: why, at: w.made})
		return
	}
	w.r.leftOut(rel, why)
}

// leftOut records that walks leave out the folder rel, and why, for the
// host to warn of once (takeLeftOut): what it holds is missing from the
// memory, which an open does not say otherwise.
func (r *RootFS) leftOut(rel, why string) {
	r.leftOutMu.Lock()
	defer r.leftOutMu.Unlock()
	if r.leftOutSeen[rel] {
		return
	}
	if r.leftOutSeen == nil {
		r.leftOutSeen = map[string]bool{}
	}
	r.leftOutSeen[rel] = true
	r.leftOutNew = append(r.leftOutNew, rel+": left out of the memory: "+why)
}

// takeLeftOut returns the folders walks left out since the last call,
// each folder once in r's life, as sentences for a warning.
func (r *RootFS) takeLeftOut() []string {
	r.leftOutMu.Lock()
	defer r.leftOutMu.Unlock()
	out := r.leftOutNew
	r.leftOutNew = nil
	return out
}

// Walk implements host.Walker: one walk, each folder opened relative to
// its parent. Errors are those of ReadDir; a folder removed during the
// walk is left out.
func (r *RootFS) Walk(dir string, fn func(dir string, list []host.DirEntry) error) error {
	w := walker{r: r, scratch: new(walkScratch)}
	defer w.close()
	list, err := w.start(dir, true)
	if err != nil {
		return err
	}
	if err := fn(dir, list); err != nil {
		return err
	}
	for {
		rel, list, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(rel, list); err != nil {
			return err
		}
	}
}

// walkChunk is one answer of fs_walk: the records of the folders of the
// walk of dir that follow after ("" to start, else a record's path and
// "/"), as many whole records as fit in max bytes, appended to out. When
// the first of them alone does not fit, out is unchanged and need is its
// size. When the walk goes on past the records returned, more is the
// after of the next answer.
func (r *RootFS) walkChunk(out []byte, dir, after string, max int) (_ []byte, need int, more string, err error) {
	if err := checkPath(dir); err != nil {
		return out, 0, "", fmt.Errorf("walk: %w", err)
	}
	resumed := after != ""
	if resumed {
		last, ok := strings.CutSuffix(after, "/")
		if !ok || checkPath(last) != nil || !(dir == "" || last == dir || strings.HasPrefix(last, dir+"/")) {
			return out, 0, "", fmt.Errorf("walk %q: resume after %q: not a folder of the walk: %w", dir, after, host.ErrInvalid)
		}
		after = last
	}
	w := r.chunkWalker()
	defer func() {
		w.close()
		r.walkers.Put(w)
	}()
	list, err := w.start(dir, !resumed)
	switch {
	case resumed && gone(err):
		return out, 0, "", nil // the walk's folder is gone: the walk is over
	case err != nil:
		return out, 0, "", err
	}
	rel := dir
	if resumed {
		if err := w.resume(dir, after); err != nil {
			return out, 0, "", err
		}
		var ok bool
		if rel, list, ok, err = w.next(); err != nil || !ok {
			return out, 0, "", err
		}
	}
	start, last := len(out), ""
	for {
		n := len(out)
		out = host.AppendWalkRecord(out, rel, list)
		if len(out)-start > max {
			if n == start {
				return out[:start], len(out) - start, "", nil
			}
			return out[:n], 0, last + "/", nil
		}
		last = rel
		var ok bool
		if rel, list, ok, err = w.next(); err != nil {
			return out[:start], 0, "", err
		}
		if !ok {
			return out, 0, "", nil
		}
	}
}

// abiWalk is fs_walk(path_ptr, path_len, after_ptr, after_len, buf_ptr,
// buf_cap) -> i32.
func (r *RootFS) abiWalk(mem Memory, pathPtr, pathLen, afterPtr, afterLen, bufPtr, bufCap uint32) int32 {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok || !bufferOK(mem, bufPtr, bufCap) {
		return codeInvalid
	}
	after, ok := guestString(mem, afterPtr, afterLen)
	if !ok {
		return codeInvalid
	}
	max := int(min(bufCap, math.MaxInt32))
	out, need, err := r.walkAnswer(p, after, max)
	switch {
	case err != nil:
		return errorCode(err)
	case need > math.MaxInt32:
		return codeInvalid
	case need > 0:
		return int32(need)
	}
	if len(out) > 0 && !mem.Write(bufPtr, out) {
		return codeInvalid
	}
	r.putAnswerBuf(out)
	return int32(len(out))
}

// chunkWalker returns a walker for walkChunk, with the stacks and scratch
// space of an earlier walk when there is one: a walk answers the module in
// many calls, each a walk of its own.
func (r *RootFS) chunkWalker() *walker {
	if w, ok := r.walkers.Get().(*walker); ok {
		return w
	}
	return &walker{r: r, reuse: true, scratch: new(walkScratch)}
}

// answerBuf returns an empty buffer for an fs_walk answer of max bytes, one
// the module has copied an earlier answer from when there is one
// (putAnswerBuf).
func (r *RootFS) answerBuf(max int) []byte {
	if b, ok := r.answerBufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, answerCap(max))
}

// putAnswerBuf takes back the buffer of an answer the module has copied; a
// buffer a very large folder grew is left to the collector.
func (r *RootFS) putAnswerBuf(b []byte) {
	if cap(b) > 4<<20 {
		return
	}
	r.answerBufs.Put(&b)
}
