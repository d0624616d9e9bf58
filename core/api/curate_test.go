package api

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestDecodeOperations(t *testing.T) {
	in := `[
	 {"type":"add","path":"engineering/billing","title":"Invoice retry policy","extra":1,
	  "content":{"narrative":{"rules":"Retry three times.","unknown":"x"},
	             "rawConcept":{"task":"t","files":"a.go, b.go\nc.go","other":true},
	             "facts":[{"subject":"s","statement":"st","category":"c"},"plain fact"],
	             "tags":"billing","keywords":["invoice","retry"],"mystery":[1,2]},
	  "reason":"record"},
	 {"type":"UPDATE","path":"a/b/c.md","content":{"narrative":"just prose","rawConcept":{"files":["x.go","y.go"]}},"reason":"r"},
	 {"type":"ADD","path":"a/b","title":"T","content":"plain content","reason":"r"},
	 {"type":"ADD","path":"a/b","title":"T","content":{"narrative":null,"rawConcept":{"files":null}},"reason":"r"},
	 {"type":"ADD","path":"a/b","title":"T","content":{"narrative":{"rules":["one","two"]}},"reason":"r"}
	]`
	var ops []Operation
	if err := json.Unmarshal([]byte(in), &ops); err != nil {
		t.Fatal(err)
	}
	c := ops[0].Content
	if c.Narrative == nil || c.Narrative.Rules != "Retry three times." || c.Narrative.Text != "" {
		t.Errorf("narrative object: %+v", c.Narrative)
	}
	if c.RawConcept == nil || !slices.Equal(c.RawConcept.Files, []string{"a.go", "b.go", "c.go"}) || c.RawConcept.Task != "t" {
		t.Errorf("files string: %+v", c.RawConcept)
	}
	if len(c.Facts) != 2 || c.Facts[0] != (Fact{Subject: "s", Statement: "st", Category: "c"}) || c.Facts[1].Statement != "plain fact" {
		t.Errorf("facts: %+v", c.Facts)
	}
	if !slices.Equal(c.Tags, []string{"billing"}) || !slices.Equal(c.Keywords, []string{"invoice", "retry"}) {
		t.Errorf("tags %v keywords %v", c.Tags, c.Keywords)
	}
	c = ops[1].Content
	if c.Narrative == nil || c.Narrative.Text != "just prose" {
		t.Errorf("narrative string: %+v", c.Narrative)
	}
	if !slices.Equal(c.RawConcept.Files, []string{"x.go", "y.go"}) {
		t.Errorf("files list: %v", c.RawConcept.Files)
	}
	if n := ops[2].Content.Narrative; n == nil || n.Text != "plain content" {
		t.Errorf("content string: %+v", n)
	}
	if ops[3].Content.Narrative != nil || ops[3].Content.RawConcept == nil || ops[3].Content.RawConcept.Files != nil {
		t.Errorf("nulls: %+v", ops[3].Content)
	}
	if n := ops[4].Content.Narrative; n == nil || n.Rules != "one\ntwo" {
		t.Errorf("list part: %+v", n)
	}

	// Narrative round trip: text-only as a string, otherwise an object.
	for _, n := range []Narrative{{Text: "prose"}, {Text: "p", Rules: "r"}} {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var back Narrative
		if err := json.Unmarshal(b, &back); err != nil || back != n {
			t.Errorf("round trip %s: %+v %v", b, back, err)
		}
	}
	if b, _ := json.Marshal(Narrative{Text: "prose"}); string(b) != `"prose"` {
		t.Errorf("text-only narrative marshals as %s", b)
	}
	var bad []Operation
	if err := json.Unmarshal([]byte(`[{"type":"ADD","content":{"narrative":42}}]`), &bad); err == nil {
		t.Error("narrative 42 accepted")
	}
}
