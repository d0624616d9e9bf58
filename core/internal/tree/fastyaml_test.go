package tree

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// yamlEntry is what YAML makes of a front matter (the inside of the "---"
// lines): the entry's front-matter fields, or the error.
func yamlEntry(inner string) (*Entry, error) {
	var ms yaml.MapSlice
	if _, err := frontmatter.Parse(strings.NewReader("---\n"+inner+"---\n"), &ms, yamlFormat); err != nil {
		return nil, err
	}
	e := &Entry{}
	return e, e.setFrontMatter(ms)
}

// checkFast fails when the shortcut reads inner and YAML reads it otherwise.
func checkFast(t *testing.T, inner string) bool {
	t.Helper()
	ms, ok := fastFrontMatter(inner)
	if !ok {
		return false
	}
	want, err := yamlEntry(inner)
	if err != nil {
		t.Fatalf("the shortcut read %q, YAML fails: %v", inner, err)
	}
	got := &Entry{}
	if err := got.setFrontMatter(ms); err != nil {
		t.Fatalf("the shortcut read %q into an error: %v", inner, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("front matter %q:\nshortcut %+v\nYAML     %+v", inner, got, want)
	}
	return true
}

// Front matters as Arbor writes them are read by the shortcut, the same as
// by YAML; what it cannot be sure of goes to YAML.
func TestFastFrontMatter(t *testing.T) {
	read := []string{
		"",
		"title: Invoice Retry Policy\nsummary: Failed invoice payments are retried three times (1, 3 and 7 days after the failure).\ntags: [billing, dunning]\nrelated: [engineering/billing/a.md, ops/b.md]\nkeywords: [invoice, failed payment, past_due]\ncreatedAt: 2025-03-11T14:05:00Z\nupdatedAt: 2025-10-02T08:30:00Z\n",
		"title: \"Yes\"\n",
		"title: \"C++: a \\\"quoted\\\" #tag\"\n",
		"title: \"tab\\there\\x07\"\n",
		"tags: [\"a, b\", c, \"[x]\"]\n",
		"summary: Joanna's 2nd draft - ok!\n",
		"title: 가치관 값\n",
		"title: Café, crème & brûlée (v1.8)\n",
	}
	for _, inner := range read {
		if !checkFast(t, inner) {
			t.Errorf("%q: not read by the shortcut", inner)
		}
	}
	toYAML := []string{
		"title: yes\n",                      // a boolean in YAML 1.1
		"title: 2023\n",                     // a number
		"title: 'single'\n",                 // single quotes
		"title: a: b\n",                     // a colon
		"title: a #comment\n",               // a comment
		"title: x\ntitle: y\n",              // a duplicate key
		"maturity: core\n",                  // a key of its own
		"tags: [a,b]\n",                     // not as Arbor writes it
		"tags: []\n",                        // empty
		"tags:\n  - a\n",                    // block style
		"title: x \n",                       // trailing space
		"title: \"\\x41\"\n",                // an escape quoteYAML does not write
		"createdAt: 2025-03-11\n",           // a date alone
		"title: -x\n",                       // an indicator first
		"summary: >\n  folded\n",            // a block scalar
		"title: x\n\n",                      // a blank line
		"title: \"a\"b\n",                   // text after the quote
		"tags: [\"a\" , b]\n",               // a space before the comma
		"title: \u2028x\n",                  // a line separator
		"title: x\u0085y\n",                 // NEL, a line break in YAML 1.1
		"title: \"\\uD800\"\n",              // a surrogate
		"related: [a/b.md, ~]\n",            // null
		"updatedAt: 2025-13-40T99:99:99Z\n", // not a time
	}
	for _, inner := range toYAML {
		if checkFast(t, inner) {
			t.Errorf("%q: read by the shortcut, want YAML", inner)
		}
	}
}

// Whatever writeFrontMatter writes for random field values is read the
// same by the shortcut as by YAML.
func TestFastFrontMatterWritten(t *testing.T) {
	pieces := []string{"a", "Zoë", "b c", " ", ",", ", ", ":", ": ", "#", " #", "'", "\"", "\\", "[", "]", "{", "}", "-", "yes", "No", "1", "2025", ".", "~", "\t", "\u00a0", "\u2028", "가", "&", "*", "!", "|", ">", "%", "@", "`"}
	n, fast := 0, 0
	randomTexts(7, pieces, 3000, 6, func(s string) {
		e := &Entry{Title: s, Summary: strings.ToUpper(s), Tags: []string{s, "x" + s}, Keywords: []string{s},
			Related: []string{"a/" + s + ".md"}, CreatedAt: time.Unix(int64(len(s))*86400*97, 0)}
		var b strings.Builder
		writeFrontMatter(&b, e, e.Title)
		fm := b.String()
		inner := strings.TrimSuffix(strings.TrimPrefix(fm, "---\n"), "---\n")
		n++
		if checkFast(t, inner) {
			fast++
		}
	})
	t.Logf("the shortcut read %d of %d", fast, n)
	if fast < n/4 {
		t.Errorf("the shortcut read %d of %d front matters written by Arbor", fast, n)
	}
}

// FuzzFastFrontMatter: on any front matter, the shortcut either declines
// or agrees with YAML.
func FuzzFastFrontMatter(f *testing.F) {
	f.Add("title: x\ntags: [a, \"b, c\"]\ncreatedAt: 2025-03-11T14:05:00Z\n")
	f.Add("summary: \"\\u00A0a\"\n")
	f.Add("title: on\n")
	f.Fuzz(func(t *testing.T, inner string) {
		checkFast(t, inner)
	})
}
