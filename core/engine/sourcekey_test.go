package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDocProbes(t *testing.T) {
	for _, p := range docProbes {
		d, err := probeDoc(p.path, p.text)
		if err != nil {
			t.Fatalf("probe %s: %v", p.path, err)
		}
		if d.Path != p.path || d.Title == "" || d.Content == "" {
			t.Errorf("probe %s: %#v", p.path, d)
		}
	}
	// The first probe exercises the transcript split and every section.
	d, _ := probeDoc(docProbes[0].path, docProbes[0].text)
	if !strings.Contains(d.Aside, "three times") || strings.Contains(d.Content, "three times") {
		t.Errorf("probe transcript: content %q, aside %q", d.Content, d.Aside)
	}
	for _, s := range []string{"Retry at 24 h", "dunning Emails the emails", "retry(3)", "plain fact", "価値観"} {
		if !strings.Contains(d.Content, s) {
			t.Errorf("probe content lacks %q: %q", s, d.Content)
		}
	}
}

// manifestKeys reads the source keys of the persisted index by path.
func manifestKeys(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var m struct {
		Docs []struct{ Path, Key string }
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range m.Docs {
		out[d.Path] = d.Key
	}
	return out
}

func TestOpenKeysFilesByBytes(t *testing.T) {
	const p = "engineering/billing/invoice_retry_policy.md"
	s, fs := newSession(t, map[string]string{p: billingEntry, "engineering/billing/context.md": contextFile})
	mustOpen(t, s)
	closeSession(t, s)
	raw, err := fs.ReadFile(IndexDir + "/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := manifestKeys(t, raw)[p]; got != sourceKey([]byte(billingEntry)) {
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
	raw, _ = fs.ReadFile(IndexDir + "/manifest.json")
	if got := manifestKeys(t, raw)[p]; got != sourceKey([]byte(crlf)) {
		t.Fatalf("stored key %q after the rewrite, want the key of the new bytes", got)
	}
	s = NewSession(fs, nil)
	wantIndex(t, "reopen", mustOpen(t, s), 2, 0, 0)
	if got := searchPaths(t, s, "escalated"); len(got) != 1 || got[0] != p {
		t.Errorf("search after the rewrite: %v", got)
	}
}
