package tree

import (
	"regexp"
	"strings"
	"testing"
)

// refWikiLinkRe and refPlainText are plainText as it was written with a
// regular expression, kept as the reference the hand-written scanner must
// agree with byte for byte.
var refWikiLinkRe = regexp.MustCompile(`(!?)\[\[([^\[\]\n]+?)\]\]`)

func refPlainText(s string) string {
	if s == "" {
		return ""
	}
	lines := splitLines(normalizeNewlines(s))
	for i, l := range lines {
		if _, t, ok := parseHeading(l); ok {
			l = t
		}
		l = strings.ReplaceAll(l, "**", "")
		l = refWikiLinkRe.ReplaceAllStringFunc(l, func(m string) string {
			inner := strings.TrimPrefix(m, "!")
			inner = inner[2 : len(inner)-2]
			target, alias, _ := strings.Cut(inner, "|")
			target = strings.ReplaceAll(strings.TrimSuffix(target, `\`), "#", " ")
			return strings.TrimSpace(target + " " + alias)
		})
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// plainTextCases are markdown edge cases for plainText.
var plainTextCases = []string{
	"",
	"plain words, nothing to strip",
	"\n\n",
	"trailing newline\n",
	"# Title\n## Section ##\n### Part\n####### seven is text\n#no space\n   # three spaces\n    # four spaces",
	"#\n##\n# #\n#\t tab",
	"**bold** and ***triple*** and ****",
	"a **[[link]]** b [[a**b]] c",
	"see [[Invoice Retry|the policy]] and [[a#h|b]] and [[a#h#i]] and [[#local]]",
	"![[embed]] !![[x]] ![[img.png]] !x[[y]]",
	"[[]] [[ ]] [[[a]]] [[a]]] [[a [[b]] ]]",
	"[[a\\|b]] in a | table | [[c\\]]",
	"[[a|b|c]] [[|alias]] [[target|]]",
	"unclosed [[link and [[other]]",
	"[[a]][[b]]![[c]]",
	"`[[code]]` stays a link in plain text: `**`",
	"```\n# not a heading in code, still stripped\n[[in code]]\n```",
	"~~~\n**x**\n~~~",
	"価値観 [[価値観#節|別名]] 가치관을 **존중**한다",
	"CRLF\r\n# heading\r\n[[x]]\r\nlone CR\rend\r",
	"invalid \xff\xfe [[\xff]] **\xc3** # \x80",
	"[[\xe4\xbe\xa1]] half rune \xe4\xbe [[a\xe4]]",
	"[[a\nb]] split over lines",
	"tab\t[[ spaced target | spaced alias ]]\t",
	"- **subject**: statement [[x]] [category]",
	"> quote [[q]]\n> # heading in quote",
}

func TestPlainTextMatchesReference(t *testing.T) {
	for _, s := range plainTextCases {
		if got, want := plainText(s), refPlainText(s); got != want {
			t.Errorf("plainText(%q)\n got %q\nwant %q", s, got, want)
		}
	}
	// Random strings made of the marks plainText looks at.
	pieces := []string{"[[", "]]", "[", "]", "!", "#", "# ", "## ", "|", `\`, "**", "*", " ", "\t", "\n", "\r",
		"a", "b", "é", "価", "\xff", "`", "```", "~~~", "   ", "\u00a0"}
	randomTexts(1, pieces, 20000, 24, func(s string) {
		if got, want := plainText(s), refPlainText(s); got != want {
			t.Fatalf("plainText(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}

func FuzzPlainText(f *testing.F) {
	for _, s := range plainTextCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainText(s), refPlainText(s); got != want {
			t.Errorf("plainText(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}
