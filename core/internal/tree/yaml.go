package tree

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// yamlFormat is the only front-matter format the tree accepts. Limiting
// frontmatter to "---" keeps notes that happen to start with "+++" or "{"
// (TOML or JSON front matter in other tools) readable as plain markdown.
var yamlFormat = frontmatter.NewFormat("---", "---", safeYAMLUnmarshal)

// safeYAMLUnmarshal turns a panic inside the YAML decoder (hostile input)
// into an error, so a broken file is reported instead of crashing the host.
func safeYAMLUnmarshal(data []byte, v interface{}) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: decoder panic: %v", r)
		}
	}()
	return yaml.Unmarshal(data, v)
}

// errUnclosed is returned for a "---" opener without a closing line.
var errUnclosed = errors.New("front matter opened with --- is not closed")

// readFrontMatter splits normalized text into its front matter (ordered)
// and body. A text without front matter has an empty map and its whole
// self as body.
func readFrontMatter(text string) (yaml.MapSlice, string, error) {
	ms, _, body, err := splitFrontMatter(text)
	return ms, body, err
}

// splitFrontMatter is readFrontMatter that also returns the text before
// the body when YAML decoded it: the front matter written as the engine
// writes it, which fastFrontMatter reads, holds no comment (see
// frontComments), and head is "" then.
func splitFrontMatter(text string) (ms yaml.MapSlice, head, body string, err error) {
	end, open, closed := frontMatterEnd(text)
	if !open {
		return nil, "", text, nil
	}
	if !closed {
		return nil, "", "", errUnclosed
	}
	if strings.HasPrefix(text, "---\n") && strings.HasSuffix(text[:end], "\n---\n") {
		if ms, ok := fastFrontMatter(text[len("---\n") : end-len("---\n")]); ok {
			return ms, "", text[end:], nil
		}
	}
	// frontmatter is given the front matter only, not the body it would
	// copy twice: what it leaves of that head (nothing, as it stops after
	// the same closing line) and the rest of the text are the body.
	rest, err := frontmatter.Parse(strings.NewReader(text[:end]), &ms, yamlFormat)
	if err != nil {
		return nil, "", "", fmt.Errorf("malformed front matter: %w", err)
	}
	if len(rest) > 0 {
		return ms, "", string(rest) + text[end:], nil
	}
	return ms, text[:end], text[end:], nil
}

// frontMatterEnd finds a front matter in a text: open reports that its
// first line that is not blank is "---" (white space around it allowed),
// closed that a later such line closes it, and head is the offset just
// past that closing line.
func frontMatterEnd(text string) (head int, open, closed bool) {
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if end >= 0 {
			next = pos + end + 1
		}
		line := text[pos:next]
		pos = next
		switch {
		case !open && isBlank(line):
			continue
		case strings.TrimSpace(line) != "---":
			if !open {
				return 0, false, false
			}
			continue
		case !open:
			open = true
			continue
		}
		return pos, true, true
	}
	return 0, open, false
}

// keyString gives a front-matter key as text (YAML keys may be numbers,
// booleans or null).
func keyString(k interface{}) string {
	if s, ok := scalarString(k); ok {
		return s
	}
	return fmt.Sprint(k)
}

// scalarString converts a decoded YAML scalar to text.
func scalarString(v interface{}) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case time.Time:
		return x.Format(time.RFC3339Nano), true
	}
	return "", false
}

// stringList reads tags, keywords or related: a YAML list, or a single
// scalar (split on commas when split is set, as people write
// "tags: a, b"). Items are trimmed; empty items are dropped.
func stringList(v interface{}, split bool) ([]string, error) {
	var raw []string
	switch x := v.(type) {
	case []interface{}:
		for _, it := range x {
			s, ok := scalarString(it)
			if !ok {
				return nil, fmt.Errorf("expected a list of strings, found a nested %s", yamlKind(it))
			}
			raw = append(raw, s)
		}
	default:
		s, ok := scalarString(x)
		if !ok {
			return nil, fmt.Errorf("expected a list of strings, found a %s", yamlKind(x))
		}
		if split {
			raw = strings.Split(s, ",")
		} else {
			raw = []string{s}
		}
	}
	return cleanList(raw), nil
}

// cleanList trims list items onto one line and drops empty ones.
func cleanList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = oneLine(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// yamlKind names a decoded YAML value's kind for error messages.
func yamlKind(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "list"
	case yaml.MapSlice, map[interface{}]interface{}:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// timeLayouts are accepted for createdAt/updatedAt; RFC3339 is what Render
// writes, the others are common in hand-written notes.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// Changed is when the entry last changed, by its front matter: updatedAt,
// else createdAt; zero for notes without dates.
func (e *Entry) Changed() time.Time {
	if !e.UpdatedAt.IsZero() {
		return e.UpdatedAt
	}
	return e.CreatedAt
}

// SaidAt is when the entry's knowledge is from, for a question about a
// time: its raw concept's timestamp, read as the front matter's times are
// (timeLayouts, in UTC), when it has one (the day a chat turn was said,
// even when a year of chats is ingested today); else Changed.
func (e *Entry) SaidAt() time.Time {
	if t, err := parseTime(e.RawConcept.Timestamp); err == nil && !t.IsZero() {
		return t
	}
	return e.Changed()
}

// parseTime reads a front-matter time.
func parseTime(v interface{}) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return x.UTC(), nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return time.Time{}, nil
		}
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not an RFC3339 time", s)
	}
	return time.Time{}, fmt.Errorf("expected an RFC3339 time, found a %s", yamlKind(v))
}

// formatTime writes a time as RFC3339 UTC with seconds. Years outside
// 0000-9999 cannot be written in RFC3339 and are dropped.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return ""
	}
	return t.Format(time.RFC3339)
}

// yamlContext is where a scalar is written: it decides which plain
// spellings are safe.
type yamlContext int

const (
	ctxValue   yamlContext = iota // after "key: "
	ctxKey                        // before ":" at the top level
	ctxFlow                       // inside [ ... ]
	ctxFlowKey                    // a key inside { ... }
)

// yamlString writes a string as a YAML scalar: plain when the YAML decoder
// reads the plain spelling back as exactly this string, double-quoted
// otherwise. Asking the decoder, rather than re-implementing YAML 1.1's
// resolution rules ("yes", "0x1F", "~", ": ", " #", ...), keeps the test
// exact; the result is always a single line.
func yamlString(s string, ctx yamlContext) string {
	if plainOK(s, ctx) {
		return s
	}
	return quoteYAML(s)
}

// plainOK reports whether s can be written unquoted in ctx.
func plainOK(s string, ctx yamlContext) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r == '\n' || needsEscape(r) || (r != ' ' && !isPrintRune(r)) {
			return false
		}
	}
	var ms yaml.MapSlice
	var doc string
	switch ctx {
	case ctxValue:
		doc = "k: " + s
	case ctxKey:
		doc = s + ": v"
	case ctxFlow:
		doc = "k: [" + s + "]"
	case ctxFlowKey:
		doc = "k: {" + s + ": v}"
	}
	if safeYAMLUnmarshal([]byte(doc), &ms) != nil || len(ms) != 1 {
		return false
	}
	switch ctx {
	case ctxValue:
		got, ok := ms[0].Value.(string)
		return ms[0].Key == "k" && ok && got == s
	case ctxKey:
		got, ok := ms[0].Key.(string)
		return ok && got == s && ms[0].Value == "v"
	case ctxFlow:
		l, ok := ms[0].Value.([]interface{})
		return ok && len(l) == 1 && l[0] == s
	default:
		m, ok := ms[0].Value.(yaml.MapSlice)
		return ok && len(m) == 1 && m[0].Key == s && m[0].Value == "v"
	}
}

// isPrintRune reports a visible character (letters, marks, symbols,
// punctuation); other spaces such as NBSP are quoted so they stay visible.
func isPrintRune(r rune) bool {
	return r > ' ' && strconv.IsPrint(r)
}

// needsEscape reports runes YAML cannot hold literally or reads as line
// breaks (NEL, LS, PS) or a byte-order mark.
func needsEscape(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 ||
		r == 0xfeff || r == 0xfffe || r == 0xffff
}

// quoteYAML writes a double-quoted YAML scalar.
func quoteYAML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case !needsEscape(r):
				b.WriteRune(r)
			case r < 0x100:
				fmt.Fprintf(&b, `\x%02X`, r)
			default:
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlFlow writes any decoded YAML value on one line, in flow style.
// Extra front-matter keys are stored in this form: single-line values
// cannot break the "---" delimiters and diff cleanly.
func yamlFlow(v interface{}, ctx yamlContext) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return yamlString(x, ctx)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0" // keep it a float when read back
		}
		return s
	case time.Time:
		return yamlString(x.Format(time.RFC3339Nano), ctx)
	case []interface{}:
		parts := make([]string, len(x))
		for i, it := range x {
			parts[i] = yamlFlow(it, ctxFlow)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.MapSlice:
		parts := make([]string, len(x))
		for i, it := range x {
			parts[i] = yamlFlowKey(it.Key) + ": " + yamlFlow(it.Value, ctxFlow)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[interface{}]interface{}:
		parts := make([]string, 0, len(x))
		for k, it := range x {
			parts = append(parts, yamlFlowKey(k)+": "+yamlFlow(it, ctxFlow))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return quoteYAML(fmt.Sprint(v))
}

// yamlFlowKey writes a key inside a flow mapping. Only scalar keys are
// kept as such; anything else becomes its text, quoted.
func yamlFlowKey(k interface{}) string {
	if s, ok := k.(string); ok {
		return yamlString(s, ctxFlowKey)
	}
	if _, ok := scalarString(k); ok {
		return yamlFlow(k, ctxFlow)
	}
	return quoteYAML(fmt.Sprint(k))
}

// canonExtraValue normalizes a KeyValue.Value as Render writes it: the
// value is decoded as YAML (a scalar, flow value or indented block) and
// written back in flow style; text that is not one YAML value is kept as
// a string.
func canonExtraValue(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	doc := "k: " + v
	if strings.HasPrefix(v, "\n") {
		doc = "k:" + v
	}
	var ms yaml.MapSlice
	if safeYAMLUnmarshal([]byte(doc), &ms) == nil && len(ms) == 1 && ms[0].Key == "k" {
		return yamlFlow(ms[0].Value, ctxValue)
	}
	return yamlString(v, ctxValue)
}
