package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestDecodeOperations(t *testing.T) {
	in := `[
	 {"type":"add","path":"engineering/billing","title":"Invoice retry policy",
	  "content":{"narrative":{"rules":"Retry three times."},
	             "rawConcept":{"task":"t","files":"a.go, b.go\nc.go"},
	             "facts":[{"subject":"s","statement":"st","category":"c"},"plain fact"],
	             "tags":"billing","keywords":["invoice","retry"]},
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

// A key an object of an operation does not have is refused, naming it, a
// near key or where it belongs, and the keys allowed: a misspelt key would
// otherwise be dropped and its text lost while the operation succeeds.
func TestOperationKeys(t *testing.T) {
	tests := []struct {
		name, in, want string // want "" decodes
	}{
		{"all keys, any case", `{"Type":"MERGE","PATH":"a/b.md","title":"t","summary":"s","content":{},"reason":"r","mergetarget":"a/c.md"}`, ""},
		{"misspelt key", `{"type":"ADD","contnet":{"narrative":"x"}}`,
			`operation: unknown key "contnet" (did you mean "content"?); operation has type, path, title, summary, content, reason, mergeTarget`},
		{"content key at the top", `{"type":"ADD","narrative":"x"}`, `operation: unknown key "narrative" (it belongs in "content")`},
		{"unrelated key", `{"type":"ADD","priority":1}`, `operation: unknown key "priority"; operation has`},
		{"operation key in content", `{"type":"ADD","content":{"title":"x"}}`, `content: unknown key "title" (it belongs in the operation itself)`},
		{"misspelt content key", `{"type":"ADD","content":{"narative":"x"}}`, `content: unknown key "narative" (did you mean "narrative"?)`},
		{"raw concept", `{"type":"ADD","content":{"rawConcept":{"task":"t","other":true}}}`, `content: rawConcept: unknown key "other"; rawConcept has task, changes, files, flow, timestamp, author`},
		{"narrative part", `{"type":"ADD","content":{"narrative":{"rulez":"x"}}}`, `content: narrative: unknown key "rulez" (did you mean "rules"?)`},
		{"fact", `{"type":"ADD","content":{"facts":[{"subjct":"s","statement":"t"}]}}`, `content: fact: unknown key "subjct" (did you mean "subject"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var op Operation
			err := json.Unmarshal([]byte(tc.in), &op)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to begin %q", err, tc.want)
			}
		})
	}
	var p CurateParams
	err := json.Unmarshal([]byte(`{"operations":[{"type":"ADD"},{"type":"ADD","reasn":"r"}]}`), &p)
	if err == nil || !strings.HasPrefix(err.Error(), `operation 2: operation: unknown key "reasn" (did you mean "reason"?)`) {
		t.Errorf("params: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"operation":[]}`), &p); err == nil || !strings.HasPrefix(err.Error(), `params: unknown key "operation" (did you mean "operations"?)`) {
		t.Errorf("params key: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"operations":[{"type":"ADD","path":"a/b","title":"T","reason":"r"}]}`), &p); err != nil || len(p.Operations) != 1 || p.Operations[0].Title != "T" {
		t.Errorf("params: %+v, %v", p, err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"content", "content", 0}, {"contnet", "content", 1}, {"reasn", "reason", 1},
		{"narative", "narrative", 1}, {"tag", "tags", 1}, {"kw", "keywords", 6}, {"", "ab", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
