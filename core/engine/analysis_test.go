package engine

import (
	"reflect"
	"sort"
	"testing"
)

// The analysis rules of core/internal/search, seen through the JSON protocol: quoted
// phrases, symbol-bearing terms, accents and Korean particles.
func TestSearchAnalysisThroughProtocol(t *testing.T) {
	entry := func(title, narrative string) string {
		return "---\ntitle: " + title + "\n---\n\n## Narrative\n" + narrative + "\n"
	}
	s, _ := newSession(t, map[string]string{
		"eng/db/pool_sizing.md":    entry("Pool sizing", "The connection pool holds 20 connections; retries back off."),
		"eng/db/pool_settings.md":  entry("Pool settings", "Each pool connection has a timeout."),
		"eng/lang/engine_core.md":  entry("Engine core", "The engine is written in C++ for speed."),
		"eng/lang/driver.md":       entry("Driver", "The driver is written in C."),
		"people/ana/meetings.md":   entry("Meetings", "Ana meets clients at the café."),
		"people/ana/values.md":     entry("Values", "팀의 가치관 정리."),
		"eng/db/import_cycles.md":  entry("Import cycles", "The import-cycle check runs in CI."),
		"eng/lang/node_runtime.md": entry("Runtime", "Scripts run on node.js."),
	})
	mustOpen(t, s)
	paths := func(q string) []string {
		t.Helper()
		r, errObj := call(t, s, "search", map[string]any{"query": q})
		if errObj != nil {
			t.Fatalf("search %q: %v", q, errObj)
		}
		var out []string
		for _, h := range r["results"].([]any) {
			if h := h.(map[string]any); h["kind"] == "entry" {
				out = append(out, h["path"].(string))
			}
		}
		sort.Strings(out)
		return out
	}
	for q, want := range map[string][]string{
		`"connection pool"`:               {"eng/db/pool_sizing.md"},
		`connection pool`:                 {"eng/db/pool_settings.md", "eng/db/pool_sizing.md"},
		`retries "connection pool" holds`: {"eng/db/pool_sizing.md"},
		`"connection pool`:                {"eng/db/pool_settings.md", "eng/db/pool_sizing.md"},
		`C++`:                             {"eng/lang/engine_core.md"},
		`cafe`:                            {"people/ana/meetings.md"},
		`가치관이`:                            {"people/ana/values.md"},
		`importcycle`:                     {"eng/db/import_cycles.md"},
		`nodejs`:                          {"eng/lang/node_runtime.md"},
		`"pool connection" timeout`:       {"eng/db/pool_settings.md"},
		`C`:                               {"eng/lang/driver.md"},
	} {
		if got := paths(q); !reflect.DeepEqual(got, want) {
			t.Errorf("search %q: %q, want %q", q, got, want)
		}
	}
}
