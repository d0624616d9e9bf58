package tree

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// refReadFrontMatter is readFrontMatter as it was, giving frontmatter the
// whole text, kept as the reference the head-only version must agree with.
func refReadFrontMatter(text string) (yaml.MapSlice, string, error) {
	open, end := frontMatterLines(splitLines(text))
	if open < 0 {
		return nil, text, nil
	}
	if end < 0 {
		return nil, "", errUnclosed
	}
	var ms yaml.MapSlice
	rest, err := frontmatter.Parse(strings.NewReader(text), &ms, yamlFormat)
	if err != nil {
		return nil, "", fmt.Errorf("malformed front matter: %w", err)
	}
	return ms, string(rest), nil
}

// frontMatterLines is how readFrontMatter found a front matter before
// frontMatterEnd, kept for the reference: in a file's lines, open is the
// index of the first non-blank line when it is "---" (else -1), end the
// index of the next "---" line, which closes it (-1 when none does).
// Surrounding white space, a trailing "\r" included, is ignored.
func frontMatterLines(lines []string) (open, end int) {
	open, end = -1, -1
	for i, l := range lines {
		if isBlank(l) {
			continue
		}
		if strings.TrimSpace(l) == "---" {
			open = i
		}
		break
	}
	if open < 0 {
		return open, end
	}
	for i := open + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			return open, i
		}
	}
	return open, end
}

var frontMatterCases = []string{
	"",
	"no front matter\n---\n",
	"---\ntitle: x\n---\nbody\n",
	"---\ntitle: x\n---",
	"---\ntitle: x\n---\n",
	"\n \n---\ntitle: x\n  ---  \n\n## Body\n---\nmore\n",
	"---",
	"---\n",
	"---\n---",
	"---\n---\n---\n",
	"---\ntitle: x\n\nbody\n",
	"---x\ntitle: x\n---\n",
	"---\njust a sentence\n---\n",
	"---\ntitle: [unclosed\n---\nbody",
	"---\ntags: [a, b]\nrelated:\n  - c.md\nextra: {k: v}\n---\n\n# T\n",
	"\t---\t\ntitle: \"q\\\"\"\n---\t\nbody",
	"---\ntitle: 価値観\n---\n価値観\n",
}

func sameFrontMatter(t *testing.T, text string) {
	t.Helper()
	ms, body, err := readFrontMatter(text)
	wms, wbody, werr := refReadFrontMatter(text)
	if fmt.Sprint(err) != fmt.Sprint(werr) || body != wbody || !reflect.DeepEqual(ms, wms) {
		t.Fatalf("readFrontMatter(%q)\n got %#v %q %v\nwant %#v %q %v", text, ms, body, err, wms, wbody, werr)
	}
}

func TestReadFrontMatterMatchesReference(t *testing.T) {
	for _, s := range frontMatterCases {
		sameFrontMatter(t, s)
	}
	pieces := []string{"---", "---", "\n", "\n", " ", "\t", "title: x", "tags: [a, b]", "- c", ": ", "k: v", "{", "[", "\"",
		"#", "a", "価", "\xff", "  ---  "}
	randomTexts(3, pieces, 5000, 16, func(s string) { sameFrontMatter(t, s) })
}

func FuzzReadFrontMatter(f *testing.F) {
	for _, s := range frontMatterCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameFrontMatter(t, s) })
}
