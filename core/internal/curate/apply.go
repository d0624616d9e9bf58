package curate

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// add creates an entry and every missing context.md above it.
func (c *Curator) add(a *Applied, op api.Operation, v valid) error {
	if err := tree.CheckNewEntryPath(v.path); err != nil {
		return err
	}
	if _, err := c.refresh(v.path); err != nil {
		return err
	}
	if err := c.checkAbsent(v.path); err != nil {
		return err
	}
	cat := c.catalog()
	e := newEntry(v.path, op, v, c.now())
	if op.Stamp != "" {
		tree.Stamp(e, op.Stamp)
	}
	data, parsed, err := c.render(e)
	if err != nil {
		return err
	}
	t := c.newTxn(cat)
	// Context files first: a crash before the entry is written leaves only
	// harmless context files behind.
	err = c.writeContexts(t, path.Dir(v.path))
	if err == nil {
		err = t.write(v.path, data)
	}
	if err == nil {
		t.putEntry(cat, parsed)
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("add %s: %w", v.path, err)
	}
	a.Message, a.Version = "added", tree.Version(data)
	c.Versions.Put(a.Version, parsed)
	return nil
}

// checkAbsent fails when anything is at p: an entry, a file that could not
// be parsed (never overwritten), or any file or folder on disk.
func (c *Curator) checkAbsent(p string) error {
	cat := c.catalog()
	if cat.Has(p) {
		return fmt.Errorf("already exists: %s", p)
	}
	if berr, ok := cat.Broken(p); ok {
		return fmt.Errorf("already exists: %s (it cannot be parsed and is never overwritten: %v)", p, berr)
	}
	_, ok, err := c.exists(p)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("already exists: %s", p)
	}
	return nil
}

// writeContexts writes the default context.md of every folder level of dir
// (domain, topic, subtopic) that has none, outermost first.
func (c *Curator) writeContexts(t *txn, dir string) error {
	cat := c.catalog()
	segs := strings.Split(dir, "/")
	for i := 1; i <= len(segs) && i <= 3; i++ {
		folder := strings.Join(segs[:i], "/")
		cp := folder + "/context.md"
		if _, ok := cat.Context(cp); ok {
			continue
		}
		if _, ok := cat.Broken(cp); ok {
			continue
		}
		if len(c.twins(false, cp)) > 0 {
			continue // a note "Context.md" is there: a context.md beside it would be its twin
		}
		_, ok, err := c.exists(cp)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		data := tree.NewContext(folder)
		ctx, err := tree.ParseContext(cp, data)
		if err != nil {
			return fmt.Errorf("default %s does not parse (refused): %w", cp, err)
		}
		if err := t.write(cp, data); err != nil {
			return err
		}
		t.putContext(cat, ctx)
	}
	return nil
}

// update replaces an existing entry, carrying over what the new content
// lacks, as the file is on disk now (checkUpdate).
func (c *Curator) update(a *Applied, op api.Operation, v valid) error {
	before, changed, err := c.read(v.path)
	if err != nil {
		return err
	}
	if err := c.checkUpdate("update", v.path, before, changed, op); err != nil {
		return err
	}
	if err := c.checkBase("update", v.path, v.base, &op); err != nil {
		return err
	}
	return c.writeUpdate(a, op, v)
}

// writeUpdate is update once the entry is as on disk.
func (c *Curator) writeUpdate(a *Applied, op api.Operation, v valid) error {
	cat := c.catalog()
	p := v.path
	var (
		e       *tree.Entry
		carried []string
		msg     = "updated"
	)
	if old, ok := cat.Get(p); ok {
		// An UPDATE of an entry a merge left in conflict is its resolution:
		// the conflict section goes (docs/sync.md).
		old, resolved := old.WithoutConflict()
		if resolved {
			msg = "updated: the merge conflict is resolved (its section removed)"
		}
		e, carried = updateEntry(old, op, v.relations, c.now())
		if err := c.keepReasons(e, old); err != nil {
			return err
		}
	} else if berr, broken := cat.Broken(p); broken {
		kept, err := c.unparsedText(p)
		if err != nil {
			return err
		}
		e = newEntry(p, op, v, c.now())
		e.Other = append(e.Other, kept)
		msg = fmt.Sprintf("updated: replaced an unparseable file (%v); its text is kept in the section %q", berr, kept.Heading)
	} else {
		st, ok, err := c.exists(p)
		switch {
		case err != nil:
			return err
		case !ok || st.IsDir:
			return fmt.Errorf("not found: %s", p)
		}
		return fmt.Errorf("cannot update %s: the file is not loaded (over the size limit or unreadable)", p)
	}
	if op.Stamp != "" {
		tree.Stamp(e, op.Stamp)
	}
	data, parsed, err := c.render(e)
	if err != nil {
		return err
	}
	t := c.newTxn(cat)
	err = t.write(p, data)
	if err == nil {
		t.putEntry(cat, parsed)
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("update %s: %w", p, err)
	}
	a.Message, a.Carried, a.Version = msg, carried, tree.Version(data)
	c.Versions.Put(a.Version, parsed)
	return nil
}

// unparsedText is the section in which an UPDATE that replaces the
// unparseable file at p keeps the file's text (a person's YAML slip must
// not cost them the note). A file that is not UTF-8 is refused: its text
// cannot be written into an entry as it is.
func (c *Curator) unparsedText(p string) (tree.Section, error) {
	data, err := c.FS.ReadFile(p)
	if err != nil {
		return tree.Section{}, fmt.Errorf("read %s: %w", p, err)
	}
	if !utf8.Valid(data) {
		return tree.Section{}, fmt.Errorf("cannot update %s: it is not valid UTF-8, so replacing it would lose its text; convert it to UTF-8 first (or DELETE it)", p)
	}
	text := strings.TrimRight(strings.ReplaceAll(strings.TrimPrefix(string(data), "\uFEFF"), "\r\n", "\n"), "\n")
	return tree.Section{Heading: "Text before this update", Body: tree.Fenced(text)}, nil
}

// upsert is ADD when the entry is missing and UPDATE when it is present.
// An existing file that cannot be parsed is not replaced: UPDATE must name
// it explicitly.
func (c *Curator) upsert(a *Applied, op api.Operation, v valid) (outcome, error) {
	cat := c.catalog()
	before, changed, err := c.read(v.path)
	if err != nil {
		return 0, err
	}
	if err := c.checkUpdate("update", v.path, before, changed, op); err != nil {
		return 0, err
	}
	if err := c.checkBase("upsert", v.path, v.base, &op); err != nil {
		return 0, err
	}
	if cat.Has(v.path) {
		if err := c.writeUpdate(a, op, v); err != nil {
			return 0, err
		}
		a.Message = "updated existing"
		return outUpdated, nil
	}
	if berr, ok := cat.Broken(v.path); ok {
		return 0, fmt.Errorf("cannot upsert %s: the existing file cannot be parsed (%v); fix it, or replace it with UPDATE", v.path, berr)
	}
	if _, ok, err := c.exists(v.path); err != nil {
		return 0, err
	} else if ok {
		return 0, c.writeUpdate(a, op, v)
	}
	if err := c.add(a, op, v); err != nil {
		return 0, err
	}
	a.Message = "added new"
	return outAdded, nil
}

// lookup returns the entry at p for a MERGE, or a clear error naming role.
func (c *Curator) lookup(role, p string) (*tree.Entry, error) {
	cat := c.catalog()
	if e, ok := cat.Get(p); ok {
		return e, nil
	}
	if berr, ok := cat.Broken(p); ok {
		return nil, fmt.Errorf("%s cannot be parsed: %s (%v)", role, p, berr)
	}
	// The catalog leaves out a file over the size limit or unreadable: it
	// is there, and an agent told it is not might write another.
	if st, ok, err := c.exists(p); err != nil {
		return nil, err
	} else if ok && !st.IsDir {
		return nil, fmt.Errorf("%s %s is not loaded (over the size limit or unreadable)", role, p)
	}
	return nil, fmt.Errorf("%s not found: %s", role, p)
}

// merge folds the source entry into the target, rewrites every relation
// that pointed at the source, and deletes the source. Writes are ordered
// so that a crash never loses knowledge: the merged target first, then the
// referring entries, the source's removal last.
func (c *Curator) merge(a *Applied, op api.Operation, v valid) error {
	src, dst := v.path, v.target
	opc := op
	if !v.named {
		opc.Title = "" // the title located the source; the target keeps its own
	}
	// Both entries as on disk now: the merge unites and concatenates, so
	// it applies to what changed there, but not to an entry removed there,
	// nor where the text the operation gives (tidy's merged text, an
	// agent's) would replace what changed there, as for an UPDATE.
	for _, p := range []struct{ path, base string }{{src, v.base}, {dst, strings.TrimSpace(op.TargetBase)}} {
		before, changed, err := c.read(p.path)
		if err != nil {
			return err
		}
		if err := c.checkUpdate("merge", p.path, before, changed, opc); err != nil {
			return err
		}
		if err := c.checkBase("merge", p.path, p.base, &opc); err != nil {
			return err
		}
	}
	for _, r := range c.catalog().Backlinks(src) {
		if _, err := c.refresh(r); err != nil {
			return err
		}
	}
	source, err := c.lookup("source", src)
	if err != nil {
		return err
	}
	target, err := c.lookup("target", dst)
	if err != nil {
		return err
	}
	cat := c.catalog()
	now := c.now()
	relink := c.noted(relinkTo(cat, src, dst))
	merged := mergeEntries(target, source, now)
	merged, _ = rewriteLinks(merged, relink)
	merged, _ = updateEntry(merged, opc, v.relations, now, src)
	if err := c.keepReasons(merged, target, source); err != nil {
		return err
	}
	mergedData, mergedParsed, err := c.render(merged)
	if err != nil {
		return err
	}
	type rewrite struct {
		data   []byte
		parsed *tree.Entry
	}
	var rewrites []rewrite
	count := 0
	refs := cat.Backlinks(src)
	since, err := c.linkersSince(relink, func(p string) bool { return p == src || p == dst || slices.Contains(refs, p) })
	if err != nil {
		return err
	}
	for _, r := range append(refs, since...) {
		if r == src || r == dst {
			continue
		}
		ref, ok := cat.Get(r)
		if !ok {
			continue
		}
		data, parsed, n, err := c.rewriteReferrer(ref, relink)
		if err != nil {
			return fmt.Errorf("rewrite relations of %s: %w", r, err)
		}
		if n == 0 {
			continue
		}
		rewrites = append(rewrites, rewrite{data, parsed})
		count += n
	}
	t := c.newTxn(cat)
	err = t.write(dst, mergedData)
	if err == nil {
		t.putEntry(cat, mergedParsed)
		for _, rw := range rewrites {
			c.relinking(rw.parsed.Path)
			if err = t.write(rw.parsed.Path, rw.data); err != nil {
				break
			}
			t.putEntry(cat, rw.parsed)
		}
	}
	if err == nil {
		if err = t.remove(src); err == nil {
			t.removed(cat, src)
		}
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("merge %s into %s: %w", src, dst, err)
	}
	a.Message = fmt.Sprintf("merged %s into %s; rewrote %s", src, dst, atoms.Count(count, "relation", "relations"))
	a.Version = tree.Version(mergedData)
	c.Versions.Put(a.Version, mergedParsed)
	return nil
}

// delete removes one entry, or a whole folder when the operation names a
// folder and no title.
func (c *Curator) delete(a *Applied, v valid) error {
	if v.folder {
		return c.deleteFolder(a, v)
	}
	cat := c.catalog()
	p := v.path
	if changed, err := c.refresh(p); err != nil {
		return err
	} else if changed && c.known(p) {
		return conflictf("%s changed on disk since this session read it; not deleted: read it, then send the DELETE again", p)
	}
	if err := c.checkBase("delete", p, v.base, nil); err != nil {
		return err
	}
	inCat := cat.Has(p)
	_, broken := cat.Broken(p)
	st, onFS, err := c.exists(p)
	if err != nil {
		return err
	}
	if onFS && st.IsDir {
		return fmt.Errorf("not found: %s (a folder; to delete it, give its path without .md)", p)
	}
	if !inCat && !broken && !onFS {
		return fmt.Errorf("not found: %s", p)
	}
	refs := brokenRelations(cat, []string{p})
	t := c.newTxn(cat)
	if err = t.remove(p); err == nil {
		t.removed(cat, p)
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("delete %s: %w", p, err)
	}
	a.Message = "deleted " + p
	if len(refs) > 0 {
		a.Message += "; still linked from " + atoms.Count(len(refs), "entry", "entries")
	}
	a.BrokenRelations = refs
	return nil
}

// known reports whether an entry or an unparseable file is at p.
func (c *Curator) known(p string) bool {
	cat := c.catalog()
	_, broken := cat.Broken(p)
	return cat.Has(p) || broken
}

// brokenRelations returns the entries outside removed that link to one of
// the removed paths, sorted.
func brokenRelations(cat *catalog.Catalog, removed []string) []string {
	gone := map[string]bool{}
	for _, p := range removed {
		gone[p] = true
	}
	var out []string
	for _, p := range removed {
		for _, r := range cat.Backlinks(p) {
			if !gone[r] && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// deleteFolder removes the entries and context files below folder, then
// the folders left empty, deepest first. Every other file stays, with the
// folders that hold it: an image, an attachment, a note the engine cannot
// parse or that is over the size limit was never read by the agent that
// asked, and is the person's (a file that cannot be parsed goes only by a
// DELETE that names it). Dot-names are left alone. A failed removal
// restores the files already removed.
func (c *Curator) deleteFolder(a *Applied, v valid) error {
	folder := v.path
	st, ok, err := c.exists(folder)
	if err != nil {
		return err
	}
	if !ok || !st.IsDir {
		if ok {
			return fmt.Errorf("not found: %s", folder)
		}
		// "domain/topic/name" may name the entry name.md.
		p, err := c.spellPath(folder+".md", "", false, false)
		if err != nil {
			return err
		}
		if !c.known(p) {
			return fmt.Errorf("not found: %s", folder)
		}
		a.Path = p
		return c.delete(a, valid{path: p, named: true, base: v.base})
	}
	if v.base != "" {
		return fmt.Errorf("base is the version of an entry; %s is a folder, which has none", folder)
	}
	var files, dirs []string
	if err := c.walk(folder, &files, &dirs); err != nil {
		return fmt.Errorf("delete %s: %w", folder, err)
	}
	for _, p := range files {
		if !tree.IsMarkdown(p) {
			continue
		}
		if changed, err := c.refresh(p); err != nil {
			return err
		} else if changed && c.known(p) {
			return conflictf("%s changed on disk since this session read it; %s was not deleted: read it, then send the DELETE again", p, folder)
		}
	}
	cat := c.catalog()
	listed := make(map[string]bool, len(files))
	var kept []string
	files = slices.DeleteFunc(files, func(p string) bool {
		listed[p] = true
		if _, context := cat.Context(p); cat.Has(p) || context {
			return false
		}
		kept = append(kept, p)
		return true
	})
	// Deepest first; in a folder, its context.md after its entries.
	slices.SortStableFunc(files, func(x, y string) int {
		if dx, dy := strings.Count(x, "/"), strings.Count(y, "/"); dx != dy {
			return dy - dx
		}
		if cx, cy := path.Base(x) == "context.md", path.Base(y) == "context.md"; cx != cy {
			if cx {
				return 1
			}
			return -1
		}
		return strings.Compare(x, y)
	})
	removed := slices.Clone(files)
	// Catalog records below the folder with no file behind them go too.
	prefix := folder + "/"
	for _, list := range [][]string{cat.Paths(), cat.ContextPaths(), cat.BrokenPaths()} {
		for _, p := range list {
			if strings.HasPrefix(p, prefix) && !listed[p] {
				removed = append(removed, p)
			}
		}
	}
	refs := brokenRelations(cat, removed)
	entries, contexts := 0, 0
	for _, p := range removed {
		switch {
		case path.Base(p) == "context.md":
			contexts++
		case tree.IsEntryPath(p):
			entries++
		}
	}
	t := c.newTxn(cat)
	for _, p := range files {
		if err = t.remove(p); err != nil {
			break
		}
	}
	if err == nil {
		// The files go before their folders can.
		err = t.apply()
	}
	var notes []string
	if err == nil {
		for _, p := range removed {
			if tree.IsMarkdown(p) {
				t.removed(cat, p)
			}
		}
		holding := map[string]bool{}
		for _, p := range kept {
			for d := path.Dir(p); d != "." && !holding[d]; d = path.Dir(d) {
				holding[d] = true
			}
		}
		notes = c.removeFolders(append(dirs, folder), holding)
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("delete folder %s: %w", folder, err)
	}
	a.Message = fmt.Sprintf("deleted folder %s: %s", folder, folderCounts(entries, contexts, entries+contexts))
	if len(kept) > 0 {
		a.Message += fmt.Sprintf("; kept %s the engine does not read, and the folders holding them: %s",
			atoms.Count(len(kept), "file", "files"), listSome(kept, 5))
	}
	if len(refs) > 0 {
		a.Message += "; removed entries still linked from " + atoms.Count(len(refs), "entry", "entries")
	}
	if len(notes) > 0 {
		a.Message += " (" + strings.Join(notes, "; ") + ")"
	}
	a.BrokenRelations = refs
	return nil
}

// removeFolders removes the folders dirs, emptied by the operation,
// deepest first, but for those in holding (which hold files it kept), and
// says which it kept and why. Folders hold no knowledge: one that cannot
// be removed is reported, not a reason to undo the operation. A folder
// holding one kept already is not reported too: that is why it is not
// empty (a mount inside it, which cannot be removed, made its parent
// "hold files the engine does not list").
func (c *Curator) removeFolders(dirs []string, holding map[string]bool) []string {
	slices.SortStableFunc(dirs, func(x, y string) int { return strings.Count(y, "/") - strings.Count(x, "/") })
	var notes, kept []string
	for _, d := range dirs {
		if holding[d] {
			continue
		}
		rerr := c.FS.Remove(d)
		if rerr == nil || errors.Is(rerr, host.ErrNotFound) {
			continue
		}
		if !slices.ContainsFunc(kept, func(k string) bool { return strings.HasPrefix(k, d+"/") }) {
			notes = append(notes, keptFolder(d, rerr))
		}
		kept = append(kept, d)
	}
	return notes
}

// keptFolder says why the folder d, emptied of what the engine reads,
// could not be removed. Not empty (INVALID, as hosts map ENOTEMPTY): it
// holds what the host does not list to the engine, whose code alone says
// nothing.
func keptFolder(d string, err error) string {
	if errors.Is(err, host.ErrInvalid) && !errors.Is(err, host.ErrTooLong) {
		return fmt.Sprintf("folder %s kept: it holds files the engine does not list, such as dot-files and symbolic links", d)
	}
	return fmt.Sprintf("folder %s kept: %v", d, err)
}

// listSome joins the first n paths, and says how many more there are.
func listSome(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:n], ", ") + fmt.Sprintf(" and %d more", len(paths)-n)
}

// walk lists the files and folders below dir, skipping dot-names.
func (c *Curator) walk(dir string, files, dirs *[]string) error {
	list, err := c.FS.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, de := range list {
		if strings.HasPrefix(de.Name, ".") {
			continue
		}
		p := dir + "/" + de.Name
		if de.IsDir {
			*dirs = append(*dirs, p)
			if err := c.walk(p, files, dirs); err != nil {
				return err
			}
			continue
		}
		*files = append(*files, p)
	}
	return nil
}
