package curate

import (
	"sync"

	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Versions remembers the entries of the versions a session handed out
// (read) or wrote, so that an operation made from one of them
// (api.Operation.Base) that finds the file changed since can still apply
// where it replaces nothing that changed: an agent adding a fact to an
// entry a person edited after the agent read it loses nothing, and is not
// refused for it. A version not remembered (another process read it, or
// it was forgotten) leaves only the strict check: any change is a
// conflict.
type Versions struct {
	mu    sync.Mutex
	byKey map[string]*tree.Entry
	order []string // oldest first
}

// maxVersions bounds what Versions keeps: the entries an agent read and
// is still writing from.
const maxVersions = 1024

// Put remembers e as the entry of version v.
func (vs *Versions) Put(v string, e *tree.Entry) {
	if vs == nil || v == "" || e == nil {
		return
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.byKey == nil {
		vs.byKey = map[string]*tree.Entry{}
	}
	if _, ok := vs.byKey[v]; !ok {
		vs.order = append(vs.order, v)
		if len(vs.order) > maxVersions {
			delete(vs.byKey, vs.order[0])
			vs.order = vs.order[1:]
		}
	}
	vs.byKey[v] = e
}

// Get returns the entry of version v, if remembered.
func (vs *Versions) Get(v string) (*tree.Entry, bool) {
	if vs == nil {
		return nil, false
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	e, ok := vs.byKey[v]
	return e, ok
}

// Current is the version of the entry at p as the catalog holds it, and
// remembers its entry for operations made from it; "" when the file no
// longer holds the bytes the catalog read (or p is no entry).
func (c *Curator) Current(p string) string {
	cat := c.catalog()
	stamp, stamped := cat.Stamp(p)
	en, ok := cat.Get(p)
	if !stamped || !ok {
		return ""
	}
	data, err := c.FS.ReadFile(p)
	if err != nil || catalog.SourceKey(data) != stamp {
		return ""
	}
	v := tree.Version(data)
	c.Versions.Put(v, en)
	return v
}
