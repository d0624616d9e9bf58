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
// listing is compared; and on every path, a failed open's too.
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
	pauseGC = func() func() {
		fs.mu.Lock()
		pauses = append(pauses, fs.reads)
		fs.mu.Unlock()
		done := false
		return func() {
			if !done {
				done = true
				fs.mu.Lock()
				resumes = append(resumes, fs.reads)
				fs.mu.Unlock()
			}
		}
	}
	t.Cleanup(func() { pauseGC = gcpause.Pause })
	open := func(label string) (pause, resume int) {
		t.Helper()
		mu.Lock()
		now += 10_000
		mu.Unlock()
		pauses, resumes, fs.reads = nil, nil, 0
		s := NewSession(fs, nil)
		mustOpen(t, s)
		closeSession(t, s)
		if len(pauses) != 1 || len(resumes) != 1 {
			t.Fatalf("%s: paused %d times, resumed %d times, want once each", label, len(pauses), len(resumes))
		}
		return pauses[0], resumes[0]
	}
	// A first open reads every file: it resumes at the first.
	if p, r := open("first open"); p != 0 || r != 1 {
		t.Errorf("first open: paused after %d reads, resumed after %d, want 0 and 1", p, r)
	}
	// Unchanged: nothing is read, and it resumes once the listing is done.
	if p, r := open("unchanged"); p != 0 || r != 0 {
		t.Errorf("unchanged: paused after %d reads, resumed after %d, want 0 and 0", p, r)
	}
	// Two files changed: resumed at the first one's read.
	edited := strings.Replace(billingEntry, "escalated to the billing lead", "escalated to the walrus desk", 1)
	if err := fs.MemFS.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if err := fs.MemFS.WriteFile("engineering/billing/context.md", []byte(strings.Replace(contextFile, "payments", "walrus refunds", 1))); err != nil {
		t.Fatal(err)
	}
	if _, r := open("two changed"); r != 1 {
		t.Errorf("two changed: resumed after %d reads, want 1", r)
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
	if _, r := open("index gone"); r != 1 {
		t.Errorf("index gone: resumed after %d reads, want 1", r)
	}
}
