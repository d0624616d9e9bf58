package engine

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/search"
)

// manifestKeys reads the source keys of the persisted index by path.
func manifestKeys(t *testing.T, fs host.FS) map[string]string {
	t.Helper()
	st, err := search.ReadStored(fs, IndexDir)
	if err != nil {
		t.Fatal(err)
	}
	return st.Keys
}

func TestOpenKeysFilesByBytes(t *testing.T) {
	const p = "engineering/billing/invoice_retry_policy.md"
	s, fs := newSession(t, map[string]string{p: billingEntry, "engineering/billing/context.md": contextFile})
	mustOpen(t, s)
	closeSession(t, s)
	if got := manifestKeys(t, fs)[p]; got != catalog.SourceKey([]byte(billingEntry)) {
		t.Fatalf("stored key %q, want the key of the file's bytes", got)
	}

	// Other bytes, same document (CRLF line endings): reused, not
	// re-indexed, and keyed by the new bytes from then on.
	crlf := strings.ReplaceAll(billingEntry, "\n", "\r\n")
	if err := fs.WriteFile(p, []byte(crlf)); err != nil {
		t.Fatal(err)
	}
	s = NewSession(fs, nil)
	wantIndex(t, "CRLF rewrite", mustOpen(t, s), 2, 0, 0)
	closeSession(t, s)
	if got := manifestKeys(t, fs)[p]; got != catalog.SourceKey([]byte(crlf)) {
		t.Fatalf("stored key %q after the rewrite, want the key of the new bytes", got)
	}
	s = NewSession(fs, nil)
	wantIndex(t, "reopen", mustOpen(t, s), 2, 0, 0)
	if got := searchPaths(t, s, "escalated"); len(got) != 1 || got[0] != p {
		t.Errorf("search after the rewrite: %v", got)
	}
}
