package tree

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"gopkg.in/yaml.v2"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t *testing.T, path string, data []byte) *Entry {
	t.Helper()
	e, err := ParseEntry(path, data)
	if err != nil {
		t.Fatalf("ParseEntry(%s): %v", path, err)
	}
	return e
}

func TestParseByteRoverEntry(t *testing.T) {
	data := readFixture(t, "byterover_entry.md")
	e := mustParse(t, "architecture/module_boundaries/auth_billing_cycle.md", data)
	want := &Entry{
		Path:      "architecture/module_boundaries/auth_billing_cycle.md",
		Title:     "Auth-Billing Circular Dependency",
		Summary:   "auth imports billing, which imports user-management, which imports auth",
		Tags:      []string{"architecture", "circular-dependency"},
		Related:   []string{"architecture/module_boundaries/auth_service_deps.md"},
		Keywords:  []string{"auth", "billing", "import-cycle"},
		CreatedAt: time.Date(2026, 2, 3, 11, 20, 0, 0, time.UTC),
		UpdatedAt: time.Date(2026, 2, 15, 9, 45, 0, 0, time.UTC),
		Reason:    "Why this knowledge was stored (the reason of the operation that last wrote it).",
		RawConcept: api.RawConcept{Task: "...", Changes: "...", Files: []string{"..."},
			Timestamp: "2026-02-03T11:20:00Z", Author: "architecture-agent"},
		Narrative: api.Narrative{Structure: "...", Rules: "..."},
		Facts:     []api.Fact{{Subject: "auth", Statement: "imports billing at runtime", Category: "project"}},
		Snippets:  []string{"..."},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("parsed\n%#v\nwant\n%#v", e, want)
	}
	checkStable(t, e)
}

func TestParseLegacyEntry(t *testing.T) {
	e := mustParse(t, "architecture/module_boundaries/auth_billing_cycle.md", readFixture(t, "legacy_entry.md"))
	wantExtra := []KeyValue{
		{Key: "importance", Value: "82"}, {Key: "maturity", Value: "validated"}, {Key: "recency", Value: "0.91"},
		{Key: "accessCount", Value: "7"}, {Key: "updateCount", Value: "3"},
	}
	if !reflect.DeepEqual(e.Extra, wantExtra) {
		t.Errorf("Extra = %#v, want %#v", e.Extra, wantExtra)
	}
	if want := []string{"architecture/module_boundaries/auth_service_deps.md", "tech_debt/prioritization/q1_2026_assessment.md"}; !reflect.DeepEqual(e.Related, want) {
		t.Errorf("Related = %q", e.Related)
	}
	if len(e.LegacyRelations) != 3 || e.LegacyRelations[1] != "architecture/module_boundaries/billing_integration.md" {
		t.Errorf("LegacyRelations = %q", e.LegacyRelations)
	}
	if want := "Map circular dependency between auth, billing,\nand user-management modules after v1.8 release."; e.RawConcept.Task != want {
		t.Errorf("Task = %q, want %q", e.RawConcept.Task, want)
	}
	if want := []string{"src/auth/middleware.ts", "src/billing/subscriptionCheck.ts"}; !reflect.DeepEqual(e.RawConcept.Files, want) {
		t.Errorf("Files = %q", e.RawConcept.Files)
	}
	if !strings.HasPrefix(e.Narrative.Structure, "The dependency cycle forms a triangle:\n") || !strings.HasSuffix(e.Narrative.Rules, "severity: low.") {
		t.Errorf("Narrative = %#v", e.Narrative)
	}
	wantLinks := []string{
		"architecture/module_boundaries/auth_service_deps.md",
		"tech_debt/prioritization/q1_2026_assessment.md",
		"architecture/module_boundaries/billing_integration.md",
	}
	if got := e.Links(); !reflect.DeepEqual(got, wantLinks) {
		t.Errorf("Links = %q, want %q", got, wantLinks)
	}
	out := string(Render(e))
	for _, s := range []string{
		"updatedAt: 2026-02-15T09:45:00Z\nimportance: 82\nmaturity: validated\nrecency: 0.91\naccessCount: 7\nupdateCount: 3\n---\n",
		"related: [architecture/module_boundaries/auth_service_deps.md, tech_debt/prioritization/q1_2026_assessment.md]\n",
		"## Relations\n- @architecture/module_boundaries/auth_service_deps.md\n",
		"**Task:** Map circular dependency between auth, billing,\nand user-management modules after v1.8 release.\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("rendering lacks %q:\n%s", s, out)
		}
	}
	checkStable(t, e)
}

func TestParseObsidianNote(t *testing.T) {
	data := readFixture(t, "obsidian_note.md")
	e := mustParse(t, "Vault/Billing/Invoice Retry Policy.md", data)
	if e.Title != "Invoice Retry Policy" {
		t.Errorf("Title = %q", e.Title)
	}
	if strings.Contains(e.Preamble, "# Invoice") || !strings.HasPrefix(e.Preamble, "Failed invoices") {
		t.Errorf("Preamble = %q", e.Preamble)
	}
	if e.RawConcept.Task != "written by hand" || !reflect.DeepEqual(e.RawConcept.Files, []string{"billing/retry.go"}) {
		t.Errorf("RawConcept = %#v", e.RawConcept)
	}
	if len(e.Other) != 1 || e.Other[0].Heading != "Notes" || !strings.Contains(e.Other[0].Body, "## not a heading") {
		t.Errorf("Other = %#v", e.Other)
	}
	want := []string{"billing_overview", "Payment Providers", "engineering/oncall/escalation"}
	if got := e.Links(); !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
	checkStable(t, e)

	// The same note with Windows line endings parses to the same entry.
	crlf := strings.ReplaceAll(string(data), "\n", "\r\n")
	e2 := mustParse(t, "Vault/Billing/Invoice Retry Policy.md", []byte(crlf))
	if !reflect.DeepEqual(e, e2) {
		t.Errorf("CRLF parse differs:\n%#v\n%#v", e, e2)
	}
	if strings.Contains(string(Render(e2)), "\r") {
		t.Error("rendering keeps CR")
	}
}

func TestTitleFallback(t *testing.T) {
	tests := []struct {
		path, data, want, preamble string
	}{
		{"notes/my_note.md", "just text\n", "my note", "just text"},
		{"notes/My_Big_Note.md", "", "My Big Note", ""},
		{"notes/x.MD", "", "x", ""},
		{"notes/x.md", "intro\n\n# Later Heading\nmore", "Later Heading", "intro\n\n# Later Heading\nmore"},
		{"notes/x.md", "```\n# not a title\n```\n", "x", "```\n# not a title\n```"},
		{"notes/x.md", "# Title #\n# Title\nbody", "Title", "body"},
		{"notes/x.md", "---\nsummary: s\n---\n# From Heading\n", "From Heading", ""},
		{"notes/x.md", "---\ntitle: From YAML\n---\n# Other\n", "From YAML", "# Other"},
	}
	for _, tt := range tests {
		e := mustParse(t, tt.path, []byte(tt.data))
		if e.Title != tt.want || e.Preamble != tt.preamble {
			t.Errorf("%s %q: title %q preamble %q; want %q, %q", tt.path, tt.data, e.Title, e.Preamble, tt.want, tt.preamble)
		}
		checkStable(t, e)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"malformed", string(readFixture(t, "malformed_frontmatter.md")), "malformed front matter: yaml: line"},
		{"unclosed", "---\ntitle: x\n\nbody\n", "not closed"},
		{"not a mapping", "---\njust a sentence\n---\n", "malformed front matter"},
		{"invalid utf8", "---\ntitle: \xff\n---\n", "not valid UTF-8"},
		{"tags mapping", "---\ntags: {a: b}\n---\n", `front matter key "tags": expected a list of strings, found a mapping`},
		{"nested tag", "---\ntags: [a, [b]]\n---\n", "nested list"},
		{"title list", "---\ntitle: [a]\n---\n", `key "title": expected text`},
		{"bad time", "---\ncreatedAt: yesterday\n---\n", `"yesterday" is not an RFC3339 time`},
	}
	for _, tt := range tests {
		_, err := ParseEntry("eng/x/broken.md", []byte(tt.data))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), "eng/x/broken.md") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q should name the path and contain %q", tt.name, err, tt.want)
		}
	}
	// The YAML error is wrapped, not flattened.
	_, err := ParseEntry("x.md", []byte("---\njust a sentence\n---\n"))
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		t.Errorf("error %v does not wrap *yaml.TypeError", err)
	}
}

func TestFrontMatterLists(t *testing.T) {
	tests := []struct {
		yaml                   string
		tags, keywords, relate []string
	}{
		{"tags: a, b\nkeywords: single\nrelated: x/y.md", []string{"a", "b"}, []string{"single"}, []string{"x/y.md"}},
		{"tags:\n  - a\n  - b\nkeywords: [k, ' ', '']", []string{"a", "b"}, []string{"k"}, nil},
		{"tags: [1, true, 2.5]\nkeywords:", []string{"1", "true", "2.5"}, nil, nil},
		{"related: [a, b]\ntags: []", nil, nil, []string{"a", "b"}},
	}
	for _, tt := range tests {
		e := mustParse(t, "x.md", []byte("---\n"+tt.yaml+"\n---\n"))
		if !reflect.DeepEqual(e.Tags, tt.tags) || !reflect.DeepEqual(e.Keywords, tt.keywords) || !reflect.DeepEqual(e.Related, tt.relate) {
			t.Errorf("%q: tags %q keywords %q related %q", tt.yaml, e.Tags, e.Keywords, e.Related)
		}
	}
}

func TestTimes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2026-02-03T11:20:00Z", "2026-02-03T11:20:00Z"},
		{"2026-02-03T12:20:00+01:00", "2026-02-03T11:20:00Z"},
		{"2026-02-03T11:20:00.123456Z", "2026-02-03T11:20:00Z"},
		{"'2026-02-03 11:20:00'", "2026-02-03T11:20:00Z"},
		{"2026-02-03", "2026-02-03T00:00:00Z"},
	}
	for _, tt := range tests {
		e := mustParse(t, "x.md", []byte("---\ncreatedAt: "+tt.in+"\n---\n"))
		if out := string(Render(e)); !strings.Contains(out, "\ncreatedAt: "+tt.want+"\n") {
			t.Errorf("createdAt %s rendered as\n%s", tt.in, out)
		}
	}
}

// TestRenderFormat pins the exact layout other tools and git diffs see.
func TestRenderFormat(t *testing.T) {
	e := &Entry{
		Path:      "engineering/billing/invoice_retry_policy.md",
		Title:     "Invoice retry policy",
		Summary:   "retries: three, then escalate",
		Tags:      []string{"billing", "#ops", "a, b"},
		Related:   []string{"engineering/billing/dunning.md"},
		Keywords:  []string{"invoice", "yes", "1.0"},
		CreatedAt: time.Date(2026, 2, 3, 12, 20, 0, 5, time.FixedZone("CET", 3600)),
		UpdatedAt: time.Date(2026, 2, 15, 9, 45, 0, 0, time.UTC),
		Extra:     []KeyValue{{Key: "importance", Value: "82"}, {Key: "aliases", Value: "\n  - retry\n  - dunning"}, {Key: "title", Value: "ignored"}},
		Reason:    "record the agreed retry policy",
		RawConcept: api.RawConcept{Task: "document retries", Changes: "none", Files: []string{"billing/retry.go", "billing/dunning.go"},
			Flow: "invoice -> retry -> escalate", Timestamp: "2026-02-03T11:20:00Z", Author: "billing-agent"},
		Narrative: api.Narrative{Text: "Overview first.", Structure: "One queue.", Rules: "Failed invoices are retried three times, then escalated.",
			Examples: "## Example heading\nInvoice 42."},
		Facts: []api.Fact{
			{Subject: "retry", Statement: "three times", Category: "policy"},
			{Statement: "plain fact"},
		},
		Snippets:        []string{"retry(3)", "```go\nretry(3)\n```", "a\n```\nb\n```"},
		LegacyRelations: []string{"engineering/billing/old.md"},
		Preamble:        "# Invoice retry policy\nSee below.",
		Other:           []Section{{Heading: "Open Questions", Body: "Who escalates?"}},
	}
	want := "---\n" +
		"title: Invoice retry policy\n" +
		"summary: \"retries: three, then escalate\"\n" +
		"tags: [billing, \"#ops\", \"a, b\"]\n" +
		"related: [engineering/billing/dunning.md]\n" +
		"keywords: [invoice, \"yes\", \"1.0\"]\n" +
		"createdAt: 2026-02-03T11:20:00Z\n" +
		"updatedAt: 2026-02-15T09:45:00Z\n" +
		"importance: 82\n" +
		"aliases: [retry, dunning]\n" +
		"---\n" +
		"\nSee below.\n" +
		"\n## Reason\nrecord the agreed retry policy\n" +
		"\n## Raw Concept\n**Task:** document retries\n**Changes:** none\n**Files:** billing/retry.go, billing/dunning.go\n" +
		"**Flow:** invoice -> retry -> escalate\n**Timestamp:** 2026-02-03T11:20:00Z\n**Author:** billing-agent\n" +
		"\n## Narrative\nOverview first.\n\n### Structure\nOne queue.\n\n### Rules\nFailed invoices are retried three times, then escalated.\n\n### Examples\n#### Example heading\nInvoice 42.\n" +
		"\n## Facts\n- **retry**: three times [policy]\n- plain fact\n" +
		"\n## Snippets\n```\nretry(3)\n```\n\n```go\nretry(3)\n```\n\n````\na\n```\nb\n```\n````\n" +
		"\n## Relations\n- @engineering/billing/old.md\n" +
		"\n## Open Questions\nWho escalates?\n"
	if got := string(Render(e)); got != want {
		t.Fatalf("Render:\n%s\nwant:\n%s", got, want)
	}
	checkStable(t, e)
}

func TestQuotedValuesRoundTrip(t *testing.T) {
	values := []string{
		"a: b", "#x", "x #y", "- x", "yes", "No", "null", "~", "1.0", "0x1F", "[x]", "{x}", "x, y",
		`"q"`, "it's", "'quoted'", "multi\nline", "tab\there", "trailing ", " leading", "@at", "`tick`",
		"*star", "&amp", "!bang", "%pct", "|pipe", ">gt", "?", "---", "...", "2026-02-03", "가치관", "Café",
		"\u2028", "\u0085", "\ufeff", "nbsp\u00a0", "back\\slash", "<<",
	}
	for _, v := range values {
		e := &Entry{Path: "x.md", Title: v, Summary: v, Tags: []string{v, "z"}, Keywords: []string{v}, Related: []string{v},
			Extra: []KeyValue{{Key: v, Value: quoteYAML(v)}}}
		r := Render(e)
		back := mustParse(t, "x.md", r)
		checkStable(t, e)
		want := strings.TrimSpace(oneLine(v))
		if want == "" {
			continue // all-space values are dropped from lists, by design
		}
		if back.Summary != strings.TrimSpace(v) || len(back.Tags) != 2 || back.Tags[0] != want || back.Keywords[0] != want || back.Related[0] != want {
			t.Errorf("%q did not round-trip:\n%s\n%#v", v, r, back)
		}
		if knownKeys[v] {
			continue
		}
		if len(back.Extra) != 1 || back.Extra[0].Key != v {
			t.Errorf("extra key %q did not round-trip:\n%s\n%#v", v, r, back.Extra)
		}
	}
}

func TestExtraValues(t *testing.T) {
	in := "---\ntitle: t\nimportance: 82\nrecency: 0.91\nflag: yes\nnothing:\nlist:\n  - a\n  - b: c\nmap:\n  z: 1\n  a: [x, 'y z']\nquoted: \"a: b\"\nwhen: 2026-01-01\n---\n"
	e := mustParse(t, "x.md", []byte(in))
	want := []KeyValue{
		{Key: "importance", Value: "82"}, {Key: "recency", Value: "0.91"}, {Key: "flag", Value: "true"}, {Key: "nothing", Value: "null"},
		{Key: "list", Value: "[a, {b: c}]"}, {Key: "map", Value: "{z: 1, a: [x, y z]}"}, {Key: "quoted", Value: `"a: b"`}, {Key: "when", Value: "2026-01-01"},
	}
	if !reflect.DeepEqual(e.Extra, want) {
		t.Fatalf("Extra = %#v\nwant %#v", e.Extra, want)
	}
	checkStable(t, e)
	// Values set by a caller are written canonically; non-YAML text becomes a string.
	e = &Entry{Title: "t", Extra: []KeyValue{{Key: "a", Value: "\n  - x\n  - z"}, {Key: "b", Value: "key: [unclosed"}, {Key: "c", Value: "plain"}, {Key: "a", Value: "dup"}}}
	out := string(Render(e))
	if !strings.Contains(out, "\na: [x, z]\nb: \"key: [unclosed\"\nc: plain\n---") {
		t.Errorf("Render extra:\n%s", out)
	}
}

func TestSectionHeadingsTolerated(t *testing.T) {
	in := "#  Title \n\n##  raw   CONCEPT\n**task:** t\n**Author**: me\n\n## FACTS ##\n* **s**: x\n+ y [c]\n\n##Not a heading\n\n## relations\n@a.md\n- @b.md\n  * @ c.md\n"
	e := mustParse(t, "x.md", []byte(in))
	if e.Title != "Title" || e.RawConcept.Task != "t" || e.RawConcept.Author != "me" {
		t.Errorf("got %#v", e)
	}
	// "##Not a heading" is not a heading (no space): it is a line of Facts.
	if !reflect.DeepEqual(e.Facts, []api.Fact{{Subject: "s", Statement: "x"}, {Statement: "y", Category: "c"}, {Statement: "##Not a heading"}}) {
		t.Errorf("Facts = %#v", e.Facts)
	}
	if !reflect.DeepEqual(e.LegacyRelations, []string{"a.md", "b.md", "c.md"}) {
		t.Errorf("LegacyRelations = %q", e.LegacyRelations)
	}
	if len(e.Other) != 0 {
		t.Errorf("Other = %#v", e.Other)
	}
	checkStable(t, e)
}

func TestRepeatedAndUnknownSections(t *testing.T) {
	in := "---\ntitle: t\n---\nintro\n\n## Facts\n- a\n\n## Custom\nkeep **me**\n\n## Facts\n- b\n\n## Relations\n@x.md\nsee [[y]]\n"
	e := mustParse(t, "x.md", []byte(in))
	if !reflect.DeepEqual(e.Facts, []api.Fact{{Statement: "a"}}) {
		t.Errorf("Facts = %#v", e.Facts)
	}
	wantOther := []Section{{"Custom", "keep **me**"}, {"Facts", "- b"}, {"Relations", "@x.md\nsee [[y]]"}}
	if !reflect.DeepEqual(e.Other, wantOther) {
		t.Errorf("Other = %#v", e.Other)
	}
	if e.LegacyRelations != nil {
		t.Errorf("LegacyRelations = %q", e.LegacyRelations)
	}
	if got := e.Links(); !reflect.DeepEqual(got, []string{"y"}) {
		t.Errorf("Links = %q", got)
	}
	checkStable(t, e)
	// Other sections named like known ones are written after an (empty) known heading.
	e = &Entry{Title: "t", Other: []Section{{"Facts", "- z"}}}
	if out := string(Render(e)); !strings.Contains(out, "## Facts\n\n## Facts\n- z\n") {
		t.Errorf("Render:\n%s", out)
	}
	checkStable(t, e)
}

// fact is a Fact from its three parts, in order.
func fact(subject, statement, category string) api.Fact {
	return api.Fact{Subject: subject, Statement: statement, Category: category}
}

func TestFacts(t *testing.T) {
	tests := []struct {
		line string
		want api.Fact
	}{
		{"- **auth**: imports billing [project]", fact("auth", "imports billing", "project")},
		{"- **auth:** imports billing", fact("auth", "imports billing", "")},
		{"- imports billing [project]", fact("", "imports billing", "project")},
		{"- see note[1]", fact("", "see note[1]", "")},
		{"- a [b] [c]", fact("", "a [b]", "c")},
		{"- [c]", fact("", "[c]", "")},
		{"- **s**:", fact("s", "", "")},
		{"- **bold** text", fact("", "**bold** text", "")},
		{"- x [ ]", fact("", "x [ ]", "")},
		{"- **a**b**: c", fact("ab", "c", "")},
	}
	for _, tt := range tests {
		e := mustParse(t, "x.md", []byte("## Facts\n"+tt.line+"\n"))
		if len(e.Facts) != 1 || e.Facts[0] != tt.want {
			t.Errorf("%q: Facts = %#v, want %#v", tt.line, e.Facts, tt.want)
		}
		checkStable(t, e)
	}
	// A wrapped fact continues on the next line; a blank line ends it.
	e := mustParse(t, "x.md", []byte("## Facts\n- **a**: one\n  two [c]\n\nloose line\n"))
	want := []api.Fact{fact("a", "one two", "c"), fact("", "loose line", "")}
	if !reflect.DeepEqual(e.Facts, want) {
		t.Errorf("Facts = %#v", e.Facts)
	}
	// Caller data is folded into the canonical form.
	e = &Entry{Title: "t", Facts: []api.Fact{{Statement: "**s**: x"}, {Subject: "a**b", Statement: "line\none", Category: "[c]"}, {}}}
	if out := string(Render(e)); !strings.Contains(out, "## Facts\n- **s**: x\n- **ab**: line one [c]\n") {
		t.Errorf("Render:\n%s", out)
	}
}

func TestSnippets(t *testing.T) {
	snippets := []string{
		"single line",
		"func f() {\n\treturn\n}",
		"```go\nx := 1\n```",
		"text\n```\ninner fence\n```\nafter",
		"````\nfour\n````",
		"## looks like a heading\n### and another",
		"~~~\ntilde\n~~~",
		"```python\nunclosed",
	}
	e := &Entry{Path: "x.md", Title: "t", Snippets: snippets}
	back := mustParse(t, "x.md", Render(e))
	if !reflect.DeepEqual(back.Snippets, snippets) {
		t.Errorf("Snippets\n%q\nwant\n%q\nrendered:\n%s", back.Snippets, snippets, Render(e))
	}
	checkStable(t, e)
	// Hand-written: fenced blocks (language kept) and loose paragraphs.
	h := mustParse(t, "x.md", []byte("## Snippets\n```sh\nmake\n```\nloose\ntext\n\n```\nplain\n```\n"))
	if want := []string{"```sh\nmake\n```", "loose\ntext", "plain"}; !reflect.DeepEqual(h.Snippets, want) {
		t.Errorf("Snippets = %q", h.Snippets)
	}
}

func TestRawConcept(t *testing.T) {
	tests := []struct {
		body string
		want api.RawConcept
	}{
		{"**Task:** a\nb\n**Files:** x.go, y.go\n**Author:** me",
			api.RawConcept{Task: "a\nb", Files: []string{"x.go", "y.go"}, Author: "me"}},
		{"preface\n**Task:** t", api.RawConcept{Task: "preface\nt"}},
		{"**Files:**\n- a, b.go\n- c.go\n**Flow:** f", api.RawConcept{Files: []string{"a, b.go", "c.go"}, Flow: "f"}},
		{"**Task:** t\n**Source:** s", api.RawConcept{Task: "t\n**Source:** s"}},
		{"**Task:** t\n**Task:** u", api.RawConcept{Task: "t\nu"}},
	}
	for _, tt := range tests {
		e := mustParse(t, "x.md", []byte("## Raw Concept\n"+tt.body+"\n"))
		if !reflect.DeepEqual(e.RawConcept, tt.want) {
			t.Errorf("%q: %#v, want %#v", tt.body, e.RawConcept, tt.want)
		}
		checkStable(t, e)
	}
	// Files with commas are written as a list; they round-trip.
	e := &Entry{Title: "t", RawConcept: api.RawConcept{Files: []string{"a, b.go", "c.go"}, Task: "x\n**Author:** not a label"}}
	back := mustParse(t, "x.md", Render(e))
	if !reflect.DeepEqual(back.RawConcept.Files, e.RawConcept.Files) || back.RawConcept.Author != "" {
		t.Errorf("round trip: %#v\n%s", back.RawConcept, Render(e))
	}
}

// TestParseRenderIdentity checks that an ordinary entry survives a
// round trip field for field, not only byte for byte.
func TestParseRenderIdentity(t *testing.T) {
	e := &Entry{
		Path: "a/b/c.md", Title: "Title", Summary: "s", Tags: []string{"t"}, Related: []string{"a/b/d.md"},
		Keywords: []string{"k"}, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Extra:      []KeyValue{{Key: "importance", Value: "50"}},
		Reason:     "r",
		RawConcept: api.RawConcept{Task: "t\nmore", Changes: "c", Files: []string{"f"}, Flow: "fl", Timestamp: "ts", Author: "au"},
		Narrative:  api.Narrative{Text: "x", Structure: "s", Dependencies: "d", Highlights: "h", Rules: "r", Examples: "e", Diagrams: "```mermaid\ngraph\n```"},
		Facts:      []api.Fact{fact("s", "st", "c")}, Snippets: []string{"a", "b"}, LegacyRelations: []string{"x.md"},
		Preamble: "pre [[link]]", Other: []Section{{"O", "body"}},
	}
	back := mustParse(t, e.Path, Render(e))
	if !reflect.DeepEqual(back, e) {
		t.Errorf("round trip\n%#v\nwant\n%#v", back, e)
	}
}

func TestLinks(t *testing.T) {
	e := &Entry{
		Related:         []string{"a.md", " b.md "},
		LegacyRelations: []string{"b.md", "c.md"},
		Preamble:        "[[d]] [[a.md]] `[[code]]` ![[img.png]] ![[embedded note]] [[#local]] [[e#h|alias]] [[f\\|x]]",
		Narrative:       api.Narrative{Rules: "```\n[[in code]]\n```\n[[g]]"},
		Facts:           []api.Fact{{Statement: "see [[h]]"}},
		Other:           []Section{{"More", "[[i]]"}},
	}
	want := []string{"a.md", "b.md", "c.md", "d", "embedded note", "e", "f", "g", "h", "i"}
	if got := e.Links(); !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
}

func TestText(t *testing.T) {
	e := mustParse(t, "x.md", readFixture(t, "legacy_entry.md"))
	e.Facts = []api.Fact{fact("auth", "imports **billing**", "project")}
	e.Preamble = "# Heading\nsee [[Invoice Retry|the policy]]"
	e.Snippets = []string{"go build ./..."}
	txt := e.Text()
	for _, s := range []string{"triangle", "severity: low", "architecture-agent",
		"src/auth/middleware.ts", "auth: imports billing", "Invoice Retry the policy", "go build"} {
		if !strings.Contains(txt, s) {
			t.Errorf("Text lacks %q:\n%s", s, txt)
		}
	}
	// Title, tags and keywords have index fields of their own; a fact's
	// category is a label, not content.
	for _, s := range []string{e.Title, "tech-debt", "billing project"} {
		if strings.Contains(txt, s) {
			t.Errorf("Text repeats %q:\n%s", s, txt)
		}
	}
	for _, s := range []string{"**", "###", "[[", "]]"} {
		if strings.Contains(txt, s) {
			t.Errorf("Text contains %q:\n%s", s, txt)
		}
	}
}
