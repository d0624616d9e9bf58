package engine

import (
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/gcpause"
)

// readsFS counts the reads of the tree's markdown files.
type readsFS struct {
	*host.MemFS
	mu    sync.Mutex
	reads int
}

func (r *readsFS) ReadFile(p string) ([]byte, error) {
	if strings.HasSuffix(p, ".md") && !strings.HasPrefix(p, ".arbor/") {
		r.mu.Lock()
		r.reads++
		r.mu.Unlock()
	}
	return r.MemFS.ReadFile(p)
}

// An open pauses the collector while it restores the index and the
// catalog and compares the listing with them, and resumes it before the
// work that grows with what changed: at the first file it reads (a file
// changed since, or one whose document the index lacks), else once the
// listing is compared, with what it allocated held; and on every path, a
// failed open's too.
func TestOpenResumesTheCollectorAtTheFirstRead(t *testing.T) {
	fs := &readsFS{MemFS: host.NewMemFS()}
	// A clock that moves ten seconds at each open: files saved before an
	// open are clearly older than the catalog it writes.
	var mu sync.Mutex
	now := int64(1_700_000_000_000)
	fs.SetNow(func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	for p, c := range map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/dunning_emails.md":       linkingEntry,
		"engineering/billing/context.md":              contextFile,
	} {
		if err := fs.MemFS.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	var pauses, resumes []int // the tree's files read by then
	var held []bool           // each resume's kept
	pauseGC = func() func(bool) {
		fs.mu.Lock()
		pauses = append(pauses, fs.reads)
		fs.mu.Unlock()
		done := false
		return func(kept bool) {
			if !done {
				done = true
				fs.mu.Lock()
				resumes = append(resumes, fs.reads)
				held = append(held, kept)
				fs.mu.Unlock()
			}
		}
	}
	t.Cleanup(func() { pauseGC = gcpause.Pause })
	open := func(label string) (pause, resume int, kept bool) {
		t.Helper()
		mu.Lock()
		now += 10_000
		mu.Unlock()
		pauses, resumes, held, fs.reads = nil, nil, nil, 0
		s := NewSession(fs, nil)
		mustOpen(t, s)
		closeSession(t, s)
		if len(pauses) != 1 || len(resumes) != 1 {
			t.Fatalf("%s: paused %d times, resumed %d times, want once each", label, len(pauses), len(resumes))
		}
		return pauses[0], resumes[0], held[0]
	}
	// A first open reads every file: it resumes at the first, holding
	// nothing (a cold build's garbage is not live).
	if p, r, k := open("first open"); p != 0 || r != 1 || k {
		t.Errorf("first open: paused after %d reads, resumed after %d holding %v, want 0 and 1, not held", p, r, k)
	}
	// Unchanged: nothing is read, and it resumes once the listing is done,
	// with what it restored held.
	if p, r, k := open("unchanged"); p != 0 || r != 0 || !k {
		t.Errorf("unchanged: paused after %d reads, resumed after %d holding %v, want 0 and 0, held", p, r, k)
	}
	// Two files changed: resumed at the first one's read.
	edited := strings.Replace(billingEntry, "escalated to the billing lead", "escalated to the walrus desk", 1)
	if err := fs.MemFS.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if err := fs.MemFS.WriteFile("engineering/billing/context.md", []byte(strings.Replace(contextFile, "payments", "walrus refunds", 1))); err != nil {
		t.Fatal(err)
	}
	if _, r, k := open("two changed"); r != 1 || k {
		t.Errorf("two changed: resumed after %d reads holding %v, want 1, not held", r, k)
	}
	// The index gone, the catalog kept: the files are read again for their
	// documents, and it resumes at the first.
	for p := range fs.MemFS.Files() {
		if strings.HasPrefix(p, IndexDir+"/") {
			if err := fs.MemFS.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, r, k := open("index gone"); r != 1 || k {
		t.Errorf("index gone: resumed after %d reads holding %v, want 1, not held", r, k)
	}
}
