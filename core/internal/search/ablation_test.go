package search

import (
	"slices"
	"testing"
)

// The options the retrieval benchmark's ablation sets switch one
// mechanism off each; their zero values are the defaults the other tests
// check.
func TestAblationOptions(t *testing.T) {
	t.Run("KeepScaffolding", func(t *testing.T) {
		const q = "how many times did the invoice retry"
		if r := mustSearch(t, newIndex(t, Options{}, corpus()...), q, 0); slices.Contains(r.Terms, "time") {
			t.Errorf("default terms %q hold the scaffolding", r.Terms)
		}
		if r := mustSearch(t, newIndex(t, Options{KeepScaffolding: true}, corpus()...), q, 0); !slices.Contains(r.Terms, "time") {
			t.Errorf("terms %q: want the scaffolding kept", r.Terms)
		}
	})
	t.Run("AsideInContent", func(t *testing.T) {
		aside := Doc{Path: "chats/a.md", Title: "Chat", Content: "User: I adopted a greyhound.", Aside: "Assistant: Greyhounds are calm."}
		other := Doc{Path: "chats/b.md", Title: "Chat", Content: "User: a walk in the rain."}
		merged := aside
		merged.Content, merged.Aside = aside.Content+"\n\n"+aside.Aside, ""
		got := hitOf(t, mustSearch(t, newIndex(t, Options{AsideInContent: true}, aside, other), "greyhound", 0), "chats/a.md")
		want := hitOf(t, mustSearch(t, newIndex(t, Options{}, merged, other), "greyhound", 0), "chats/a.md")
		split := hitOf(t, mustSearch(t, newIndex(t, Options{}, aside, other), "greyhound", 0), "chats/a.md")
		if !near(got.Raw, want.Raw) || near(got.Raw, split.Raw) {
			t.Errorf("raw %v: want %v, as with the aside in the content (%v with it aside)", got.Raw, want.Raw, split.Raw)
		}
	})
}
