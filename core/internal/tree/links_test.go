package tree

import (
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestEntryClone(t *testing.T) {
	e := &Entry{Path: "a.md", Tags: []string{"t"}, Related: []string{"r"}, Keywords: []string{"k"},
		Extra: []KeyValue{{Key: "x", Value: "1"}}, RawConcept: api.RawConcept{Files: []string{"f"}}, Facts: []api.Fact{{Statement: "s"}},
		Snippets: []string{"c"}, LegacyRelations: []string{"l"}, Other: []Section{{"H", "b"}}}
	c := e.Clone()
	if !reflect.DeepEqual(c, e) || c == e {
		t.Fatalf("clone %#v", c)
	}
	c.Tags[0], c.Related[0], c.Keywords[0], c.Extra[0].Value = "T", "R", "K", "2"
	c.RawConcept.Files[0], c.Facts[0].Statement, c.Snippets[0] = "F", "S", "C"
	c.LegacyRelations[0], c.Other[0].Body = "L", "B"
	if e.Tags[0] != "t" || e.Related[0] != "r" || e.Keywords[0] != "k" || e.Extra[0].Value != "1" ||
		e.RawConcept.Files[0] != "f" || e.Facts[0].Statement != "s" || e.Snippets[0] != "c" ||
		e.LegacyRelations[0] != "l" || e.Other[0].Body != "b" {
		t.Errorf("changing the clone changed the entry: %#v", e)
	}
}
