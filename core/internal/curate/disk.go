package curate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// The tree on disk is the truth: people edit entries in editors and pull
// them with git while a session holds its catalog. Before an operation
// reads what an entry holds, it reads the file again (refresh); a file
// changed since the catalog read it is read anew and the operation applies
// to what is on disk now, unless it would replace what changed there, and
// then it is a conflict that changes nothing. The writes themselves are
// compare-and-swaps on the catalog's stamps (txn.expect), for changes made
// while the operation runs.

// conflictError is an operation refused because the file on disk is not
// what the session read: its status is api.StatusConflict.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return "conflict: " + e.msg }

func conflictf(format string, args ...any) error {
	return &conflictError{fmt.Sprintf(format, args...)}
}

func isConflict(err error) bool {
	var ce *conflictError
	return errors.As(err, &ce)
}

// refresh brings the catalog in step with the file at p on disk: a file
// changed since the catalog read it is read again (as an entry, a context
// file, or a broken file), a removed one is forgotten, a new one read; one
// over the size limit is forgotten, as Load skips it. The engine hears of
// each change (OnChange) and re-indexes it. refresh reports whether the
// catalog's view of p changed.
func (c *Curator) refresh(p string) (bool, error) {
	cat := c.catalog()
	if fi, err := c.FS.Stat(p); err == nil && !fi.IsDir && fi.Size > int64(c.maxBytes()) {
		// Unread: a note grown into a log or a dump may be gigabytes.
		return c.forget(p), nil
	}
	data, err := c.FS.ReadFile(p)
	switch {
	case errors.Is(err, host.ErrNotFound), err == nil && len(data) > c.maxBytes(), errors.Is(err, host.ErrInvalid):
		// Hosts refuse to read what is no file: a folder of the same name
		// in its place is the file gone too (what the folder holds is
		// listed); a FIFO or a socket named like a note never was one,
		// and a folder DELETE keeps it where it failed reading it.
		return c.forget(p), nil
	case err != nil:
		return false, fmt.Errorf("read %s: %w", p, err)
	}
	if s, ok := cat.Stamp(p); ok && s == catalog.SourceKey(data) {
		return false, nil
	}
	cat.Take(p, data)
	switch en, ctx := c.entry(p); {
	case en != nil:
		c.notify(Change{Path: p, Entry: en})
	case ctx != nil:
		c.notify(Change{Path: p, Context: ctx})
	default: // broken: not in the index
		c.notify(Change{Path: p, Removed: true})
	}
	return true, nil
}

// forget drops what the catalog holds of the file at p, which is gone,
// and reports whether it held anything.
func (c *Curator) forget(p string) bool {
	cat := c.catalog()
	if _, stamped := cat.Stamp(p); !stamped && !c.known(p) {
		return false
	}
	cat.Forget(p)
	c.notify(Change{Path: p, Removed: true})
	return true
}

// entry returns what the catalog holds at p: an entry or a context file.
func (c *Curator) entry(p string) (*tree.Entry, *tree.Context) {
	cat := c.catalog()
	if en, ok := cat.Get(p); ok {
		return en, nil
	}
	ctx, _ := cat.Context(p)
	return nil, ctx
}

func (c *Curator) notify(ch Change) {
	if c.OnChange != nil {
		c.OnChange(ch)
	}
}

// seen is what the session held of an entry before refresh: the entry,
// or that the file was known at all (parsed or not).
type seen struct {
	entry *tree.Entry
	known bool
}

// read refreshes p and returns what the session held of it before.
func (c *Curator) read(p string) (seen, bool, error) {
	en, _ := c.catalog().Get(p)
	s := seen{entry: en, known: c.known(p)}
	changed, err := c.refresh(p)
	return s, changed, err
}

// checkBase refuses an operation made from the version base of the file at
// p (api.Operation.Base) when the file holds another version now, or is
// gone: a person's edit or another writer's since the caller read it,
// which the operation's text was not made from. The session's own reading
// cannot tell: a watching engine reads every change before the call. An
// operation that writes the entry (op, nil for DELETE and MOVE, which take
// it whole) still applies where it replaces nothing that changed since
// base, when the session remembers base's entry (Versions): what it
// unites (facts, tags, relations) keeps the change. An empty base checks
// nothing; call it once the catalog holds the file as it is (read).
func (c *Curator) checkBase(verb, p, base string, op *api.Operation) error {
	if base == "" {
		return nil
	}
	data, err := c.FS.ReadFile(p)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return conflictf("%s was removed since version %s, which this %s was made from; nothing was written", p, base, verb)
	case err != nil:
		return fmt.Errorf("read %s: %w", p, err)
	}
	now := tree.Version(data)
	if now == base {
		return nil
	}
	if was, ok := c.Versions.Get(base); ok && op != nil {
		if cur, ok := c.catalog().Get(p); ok {
			parts := replacedBoth(was, cur, *op)
			if len(parts) == 0 {
				return nil
			}
			return conflictf("%s changed since version %s, which this %s was made from, in what it replaces (%s; it is version %s now); nothing was written: read it, then send the %s again",
				p, base, verb, strings.Join(parts, ", "), now, verb)
		}
	}
	return conflictf("%s changed since version %s, which this %s was made from (it is version %s now); nothing was written: read it, then send the %s again", p, base, verb, now, verb)
}

// checkUpdate refuses an operation (verb: "update", "merge") on an entry
// whose file changed on disk since the session read it (before), when the
// file is gone or the text the operation gives would replace what changed
// there. Parts it leaves alone, or that are united (relations, tags,
// keywords, facts, snippets), keep what the file holds now.
func (c *Curator) checkUpdate(verb, p string, before seen, changed bool, op api.Operation) error {
	if !changed || !before.known {
		return nil
	}
	if !c.known(p) {
		if fi, err := c.FS.Stat(p); err == nil && !fi.IsDir && fi.Size > int64(c.maxBytes()) {
			return conflictf("%s grew to %s on disk since this session read it, over the %s limit of an entry, and is no longer loaded; nothing was written", p, mib(fi.Size), mib(int64(c.maxBytes())))
		}
		return conflictf("%s was removed on disk since this session read it; nothing was written (ADD it again to bring it back)", p)
	}
	now, ok := c.catalog().Get(p)
	if !ok || before.entry == nil {
		return nil
	}
	if parts := replacedBoth(before.entry, now, op); len(parts) > 0 {
		return conflictf("%s changed on disk since this session read it, in what this %s replaces (%s); nothing was written: read it, then send the %s again",
			p, verb, strings.Join(parts, ", "), verb)
	}
	return nil
}

// replacedBoth lists the parts op replaces (title, summary, narrative
// parts, raw concept fields) that changed between before and now, to a
// value other than op's.
func replacedBoth(before, now *tree.Entry, op api.Operation) []string {
	var out []string
	part := func(name, give, was, is string) {
		give = strings.TrimSpace(give)
		if give != "" && strings.TrimSpace(was) != strings.TrimSpace(is) && give != strings.TrimSpace(is) {
			out = append(out, name)
		}
	}
	part("title", op.Title, before.Title, now.Title)
	part("summary", op.Summary, before.Summary, now.Summary)
	c := op.Content
	if c.Narrative != nil {
		n := *c.Narrative
		for _, np := range api.NarrativeParts {
			part("narrative."+np.Name, *np.Get(&n), *np.Get(&before.Narrative), *np.Get(&now.Narrative))
		}
	}
	if c.RawConcept != nil {
		r := *c.RawConcept
		for _, f := range rawConceptFields {
			part("rawConcept."+f.name, *f.get(&r), *f.get(&before.RawConcept), *f.get(&now.RawConcept))
		}
		if len(r.Files) > 0 && !slices.Equal(before.RawConcept.Files, now.RawConcept.Files) && !slices.Equal(r.Files, now.RawConcept.Files) {
			out = append(out, "rawConcept.files")
		}
	}
	return out
}
