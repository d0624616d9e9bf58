package catalog

import (
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
