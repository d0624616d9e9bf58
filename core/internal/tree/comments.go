package tree

import (
	"reflect"
	"strings"

	"gopkg.in/yaml.v2"
)

// A person's front matter may hold YAML comments ("# why this is draft"),
// which the decoder drops. The entry keeps them (Entry.Comments) so that an
// engine rewrite writes them back: each on its own line above the
// top-level key it stood above, inside or on the line of.
//
// yaml.v2 has no comment API, and yaml.v3 (which has) would add a second
// YAML parser to the wasm module for this alone. So a comment is found the
// way plainOK quotes, by asking the decoder: a " #" (or a "#" starting a
// line) begins a comment when cutting the line there leaves what the
// front matter decodes to unchanged. Text inside a quoted or block scalar
// fails that test, since cutting it changes the value. Two lexical rules
// spare most decodes (candidates): a "#" inside a value that opens with a
// quote on its line, or on a line of a block scalar ("|", ">"), is text.

// frontComments returns the comments of a front matter (head: the text up
// to and including its closing "---" line), each with the top-level key
// it belongs to ("" when it follows the last key). ms is what head
// decodes to; comments are looked for only when a "#" is there.
func frontComments(head string, ms yaml.MapSlice) []KeyValue {
	if !strings.Contains(head, "#") {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(head, "\n"), "\n")
	open := 0
	for open < len(lines) && strings.TrimSpace(lines[open]) != "---" {
		open++
	}
	if open+1 >= len(lines) {
		return nil
	}
	inner := lines[open+1 : len(lines)-1]
	starts := candidates(inner)
	cuts := make([]int, len(inner)) // where each line's comment starts, or -1
	first, tries := map[int]int{}, 0
	for i := range inner {
		cuts[i] = -1
		if len(starts[i]) > 0 {
			first[i] = starts[i][0]
			tries += len(starts[i])
		}
	}
	if len(first) == 0 {
		return nil
	}
	// ms is what the decoder read (the caller's); should it differ from
	// what these lines decode to, the lines are the reference.
	want := ms
	joint := same(want, cutLines(inner, first))
	if !joint {
		var ok bool
		if want, ok = decodeLines(inner); !ok {
			return nil
		}
		joint = same(want, cutLines(inner, first))
	}
	switch {
	case joint:
		// The usual case, one decode: every line's first candidate is one.
		for i, c := range first {
			cuts[i] = c
		}
	case tries > maxCommentTries:
		return nil
	default:
		all := map[int]int{}
		for i := range inner {
			for _, c := range starts[i] {
				if same(want, cutLines(inner, map[int]int{i: c})) {
					cuts[i], all[i] = c, c
					break
				}
			}
		}
		// Each cut was tried alone; together they must still leave the
		// value as it was, or none is taken to be a comment (the values
		// are kept all the same).
		if len(all) == 0 || !same(want, cutLines(inner, all)) {
			return nil
		}
	}
	keys := topLevelKeys(inner, cuts, ms)
	var out []KeyValue
	for i, c := range cuts {
		if c >= 0 {
			out = append(out, KeyValue{Key: keys[i], Value: inner[i][c+1:]})
		}
	}
	return out
}

// maxCommentTries bounds the decodes of one front matter whose candidates
// are not all comments (each costs a decode of the whole front matter): a
// hostile file must not make reading it quadratic. Past it, comments are
// not kept.
const maxCommentTries = 64

// candidates lists, for each line, the offsets of each "#" that could
// begin a comment: at the start of the line or after white space, and
// neither on a line of a block scalar (indented more than the line that
// opened it with "|" or ">") nor before the closing quote of a value that
// opens with a quote on its line.
func candidates(lines []string) [][]int {
	out := make([][]int, len(lines))
	block := -1 // the indentation of the line that opened a block scalar
	for i, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if block >= 0 && (strings.TrimSpace(l) == "" || indent > block) {
			continue
		}
		block = -1
		qa, qb := quoted(l)
		for c := 0; c < len(l); c++ {
			if l[c] == '#' && (c == 0 || l[c-1] == ' ' || l[c-1] == '\t') && (c < qa || c >= qb) {
				out[i] = append(out[i], c)
			}
		}
		text := l
		if len(out[i]) > 0 {
			text = l[:out[i][0]]
		}
		if blockIndicator(text) {
			block = indent
		}
	}
	return out
}

// valueStart is the offset of the value in a line "key: value" or
// "- value" (after its indentation), or -1.
func valueStart(l string) int {
	t := strings.TrimLeft(l, " ")
	at := len(l) - len(t)
	if strings.HasPrefix(t, "- ") {
		return at + 2 + len(t[2:]) - len(strings.TrimLeft(t[2:], " "))
	}
	if t == "" || t[0] == '"' || t[0] == '\'' {
		return -1 // a quoted key: left to the decoder
	}
	k := strings.Index(t, ": ")
	if k < 0 {
		return -1
	}
	rest := t[k+2:]
	return at + k + 2 + len(rest) - len(strings.TrimLeft(rest, " "))
}

// quoted is the span [a, b) of a quoted value ("…" or '…') that opens
// at l's value, to the end of l when it does not close on this line; a
// line whose value is not quoted has an empty span.
func quoted(l string) (a, b int) {
	v := valueStart(l)
	if v < 0 || v >= len(l) || (l[v] != '"' && l[v] != '\'') {
		return 0, 0
	}
	q := l[v]
	for i := v + 1; i < len(l); i++ {
		switch {
		case q == '"' && l[i] == '\\':
			i++
		case l[i] == q && q == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i++ // '' is a quote inside single quotes
		case l[i] == q:
			return v, i + 1
		}
	}
	return v, len(l)
}

// blockIndicator reports a line whose value opens a block scalar: "|" or
// ">", with a chomping or indentation indicator.
func blockIndicator(l string) bool {
	v := valueStart(l)
	if v < 0 {
		return false
	}
	t := strings.TrimSpace(l[v:])
	if t == "" || (t[0] != '|' && t[0] != '>') {
		return false
	}
	return strings.Trim(t[1:], "+-0123456789") == ""
}

// cutLines is lines, each line named in cut cut at its offset, as one text.
func cutLines(lines []string, cut map[int]int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if c, ok := cut[i]; ok {
			l = l[:c]
		}
		out[i] = l
	}
	return out
}

// decodeLines decodes front-matter lines as a YAML mapping.
func decodeLines(lines []string) (yaml.MapSlice, bool) {
	var ms yaml.MapSlice
	if err := safeYAMLUnmarshal([]byte(strings.Join(lines, "\n")+"\n"), &ms); err != nil {
		return nil, false
	}
	return ms, true
}

// same reports whether lines decode to want.
func same(want yaml.MapSlice, lines []string) bool {
	got, ok := decodeLines(lines)
	return ok && reflect.DeepEqual(want, got)
}

// topLevelKeys names, for each line, the top-level key its comment belongs
// to: a comment with text before it on its line belongs to the key that
// line is under; a comment alone on an indented line to the key whose
// value it is inside; one alone at the start of a line to the next key,
// whose head it is ("" after the last key). A key starts on each line that
// begins with neither white space nor "#" nor a list item's "- " (a list
// may be written at its key's indentation). When those lines are not as many as the keys
// decoded (a key spelled over several lines), every comment goes after the
// last key, still kept.
func topLevelKeys(lines []string, cuts []int, ms yaml.MapSlice) []string {
	starts := make([]bool, len(lines))
	n := 0
	for i, l := range lines {
		if c := cuts[i]; c >= 0 {
			l = l[:c]
		}
		item := l == "-" || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "-\t")
		if l != "" && !strings.ContainsRune(" \t#", rune(l[0])) && !item {
			starts[i] = true
			n++
		}
	}
	out := make([]string, len(lines))
	if n != len(ms) {
		return out
	}
	cur := -1
	for i, l := range lines {
		if starts[i] {
			cur++
		}
		if cuts[i] < 0 {
			continue
		}
		if strings.TrimSpace(l[:cuts[i]]) != "" || (cuts[i] > 0 && cur >= 0) {
			out[i] = keyString(ms[max(cur, 0)].Key)
			continue
		}
		// Alone at the start of its line: the next key's head.
		for j := i + 1; j < len(lines); j++ {
			if starts[j] {
				out[i] = keyString(ms[cur+1].Key)
				break
			}
		}
	}
	return out
}

// writeComments writes the comments in list that belong to key, each on
// its own line, and marks them written.
func writeComments(b *strings.Builder, list []KeyValue, done []bool, key string) {
	for i, kv := range list {
		if !done[i] && kv.Key == key {
			done[i] = true
			b.WriteString("#" + oneLineComment(kv.Value) + "\n")
		}
	}
}

// oneLineComment keeps a comment on its line and the front matter
// readable: a comment made by the engine (a MERGE's "had summary: …") or
// given through the API may hold line breaks, which would end it, or
// characters YAML refuses even in a comment.
func oneLineComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && needsEscape(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
