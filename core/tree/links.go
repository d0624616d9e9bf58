package tree

import (
	"regexp"
	"strings"
)

// wikiLinkRe matches [[target]], [[target|alias]], [[target#heading]] and
// embeds (![[...]]).
var wikiLinkRe = regexp.MustCompile(`(!?)\[\[([^\[\]\n]+?)\]\]`)

// inlineCodeRe matches `code` spans, whose brackets are not links.
var inlineCodeRe = regexp.MustCompile("`[^`\n]*`")

// Links returns every relation target the entry declares, raw (as written):
// related:, legacy @path lines and [[wikilinks]], de-duplicated, in order.
//
// Wikilinks are taken from the preamble, Reason, Raw Concept (task,
// changes, flow), Narrative, facts and Other sections, outside code; a
// wikilink contributes its target only ("[[a#h|b]]" gives "a"). Embeds of
// non-markdown files (![[image.png]]) are attachments, not relations, and
// are skipped.
func (e *Entry) Links() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range e.Related {
		add(r)
	}
	for _, r := range e.LegacyRelations {
		add(r)
	}
	for _, t := range e.linkTexts() {
		for _, w := range wikiLinks(t) {
			add(w)
		}
	}
	return out
}

// linkTexts lists the free texts that may hold wikilinks, in file order.
func (e *Entry) linkTexts() []string {
	n := &e.Narrative
	texts := []string{e.Preamble, e.Reason, e.RawConcept.Task, e.RawConcept.Changes, e.RawConcept.Flow,
		n.Text, n.Structure, n.Dependencies, n.Highlights, n.Rules, n.Examples, n.Diagrams}
	for _, f := range e.Facts {
		texts = append(texts, f.Subject, f.Statement)
	}
	for _, o := range e.Other {
		texts = append(texts, o.Heading, o.Body)
	}
	return texts
}

// wikiLinks returns the wikilink targets in text, skipping code.
func wikiLinks(text string) []string {
	if !strings.Contains(text, "[[") {
		return nil
	}
	var out []string
	var sc fenceScanner
	for _, l := range splitLines(normalizeNewlines(text)) {
		if !sc.outside(l) || !strings.Contains(l, "[[") {
			continue
		}
		l = inlineCodeRe.ReplaceAllString(l, "")
		for _, m := range wikiLinkRe.FindAllStringSubmatch(l, -1) {
			t := wikiTarget(m[2])
			if t == "" {
				continue
			}
			if m[1] == "!" && !isNoteTarget(t) {
				continue
			}
			out = append(out, t)
		}
	}
	return out
}

// wikiTarget is the part of a wikilink's inside before "#" or "|" (a
// "\|" escape, as written inside tables, counts as "|").
func wikiTarget(inner string) string {
	if i := strings.IndexAny(inner, "#|"); i >= 0 {
		inner = inner[:i]
	}
	return strings.TrimSpace(strings.TrimSuffix(inner, `\`))
}

// isNoteTarget reports a target naming a note (no extension, or .md).
func isNoteTarget(t string) bool {
	base := t[strings.LastIndexByte(t, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	return dot < 0 || strings.EqualFold(base[dot:], ".md")
}

// Text returns the searchable body text of the entry (all sections, without
// markup noise): preamble, every section's text, facts and snippets, one
// per line. Title, summary, tags and keywords are left out: the index holds
// them in fields of their own, and repeating them here would count every
// title word twice and fill excerpts with the title. Heading marks, "**" and
// wikilink brackets are removed; snippets are kept verbatim (code is what
// people search for).
func (e *Entry) Text() string {
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	addText := func(s string) { add(plainText(s)) }
	addText(e.Preamble)
	addText(e.Reason)
	rc := e.RawConcept
	addText(rc.Task)
	addText(rc.Changes)
	add(strings.Join(rc.Files, " "))
	addText(rc.Flow)
	add(rc.Author)
	n := e.Narrative
	for _, s := range []string{n.Text, n.Structure, n.Dependencies, n.Highlights, n.Rules, n.Examples, n.Diagrams} {
		addText(s)
	}
	for _, f := range e.Facts {
		if f.Subject != "" {
			addText(f.Subject + ": " + f.Statement)
		} else {
			addText(f.Statement)
		}
	}
	for _, s := range e.Snippets {
		add(s)
	}
	for _, o := range e.Other {
		addText(o.Heading)
		addText(o.Body)
	}
	return strings.Join(parts, "\n")
}

// plainText strips the markdown marks that carry no words.
func plainText(s string) string {
	if s == "" {
		return ""
	}
	lines := splitLines(normalizeNewlines(s))
	for i, l := range lines {
		if _, t, ok := parseHeading(l); ok {
			l = t
		}
		l = strings.ReplaceAll(l, "**", "")
		l = wikiLinkRe.ReplaceAllStringFunc(l, func(m string) string {
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
