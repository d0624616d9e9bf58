package tree

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v2"
)

// The front matter Arbor writes is a handful of known keys, each on one
// line, as a plain or double-quoted string, a flow list of such strings or
// an RFC3339 time. Decoding it with YAML was half of parsing an entry
// (about 260 µs per file under wazero, where opening a tree parses every
// file), so readFrontMatter reads that shape directly and leaves anything
// else to YAML. The shortcut is only taken where it cannot differ: every
// plain scalar starts with a letter and holds no character that YAML could
// read as syntax, no scalar is a word YAML 1.1 reads as a boolean or null,
// and a quoted scalar is exactly what quoteYAML writes for the value read
// back, an escape form YAML decodes the same way. FuzzFastFrontMatter
// compares the two readers.

// fastKeys are the keys the shortcut reads and the shape of their values.
var fastKeys = map[string]byte{
	"title": 's', "summary": 's',
	"tags": 'l', "keywords": 'l', "related": 'l',
	"createdAt": 't', "updatedAt": 't',
}

// fastFrontMatter decodes the lines between the "---" lines when they are
// in the shape above; ok is false when YAML must decide.
func fastFrontMatter(inner string) (ms yaml.MapSlice, ok bool) {
	seen := map[string]bool{}
	for inner != "" {
		line, rest, found := strings.Cut(inner, "\n")
		if !found {
			return nil, false
		}
		inner = rest
		k, v, found := strings.Cut(line, ": ")
		kind := fastKeys[k]
		if !found || kind == 0 || seen[k] {
			return nil, false
		}
		seen[k] = true
		var val interface{}
		switch kind {
		case 's':
			s, ok := fastScalar(v, false)
			if !ok {
				return nil, false
			}
			val = s
		case 'l':
			l, ok := fastList(v)
			if !ok {
				return nil, false
			}
			val = l
		case 't':
			if !fastTime(v) {
				return nil, false
			}
			val = v
		}
		ms = append(ms, yaml.MapItem{Key: k, Value: val})
	}
	return ms, true
}

// fastScalar reads one plain or double-quoted scalar; inFlow is for the
// items of a flow list, where ",[]{}" are syntax.
func fastScalar(v string, inFlow bool) (string, bool) {
	if strings.HasPrefix(v, `"`) {
		s, err := strconv.Unquote(v)
		// quoteYAML's escapes are a subset of Go's; the check that it
		// writes v again for s keeps every other form (single quotes, \x
		// in lower case, \U, line folding) to YAML.
		if err != nil || quoteYAML(s) != v {
			return "", false
		}
		return s, true
	}
	return v, plainString(v, inFlow)
}

// plainString reports whether YAML reads the plain scalar v as the string
// v itself (conservatively: false sends it to YAML).
func plainString(v string, inFlow bool) bool {
	first, _ := utf8.DecodeRuneInString(v)
	if !unicode.IsLetter(first) || strings.TrimSpace(v) != v || yaml11Word(v) {
		return false
	}
	for i, r := range v {
		switch {
		case r == ':' || r == '#' || r == '"' || r == '\\':
			return false
		case r == ',' || r == '[' || r == ']' || r == '{' || r == '}':
			if inFlow {
				return false
			}
		case r == utf8.RuneError && !strings.HasPrefix(v[i:], "\uFFFD"):
			return false
		case r != ' ' && (needsEscape(r) || !isPrintRune(r)):
			return false
		}
	}
	return true
}

// yaml11Word reports the plain scalars YAML 1.1 reads as booleans or null
// (in any case, more than YAML itself does).
func yaml11Word(v string) bool {
	switch strings.ToLower(v) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return true
	}
	return false
}

// fastList reads a flow list of scalars written as writeFrontMatter writes
// them: "[a, b]".
func fastList(v string) ([]interface{}, bool) {
	if len(v) < 3 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, false
	}
	var out []interface{}
	for rest := v[1 : len(v)-1]; ; {
		item, tail, more := cutItem(rest)
		s, ok := fastScalar(item, true)
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if !more {
			return out, true
		}
		rest = tail
	}
}

// cutItem cuts the first item of a flow list's inside at the ", " that ends
// it, outside a quoted item.
func cutItem(s string) (item, rest string, more bool) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				if strings.HasPrefix(s[i+1:], ", ") {
					return s[:i+1], s[i+3:], true
				}
				return s, "", false
			}
		}
		return s, "", false
	}
	item, rest, more = strings.Cut(s, ", ")
	return item, rest, more
}

// fastTime reports an RFC3339 UTC time with seconds, as formatTime writes,
// that is a valid time (YAML is left to report an invalid one).
func fastTime(v string) bool {
	if len(v) != len("2006-01-02T15:04:05Z") {
		return false
	}
	for i := range len(v) {
		c := v[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		case 19:
			if c != 'Z' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	_, err := time.Parse(time.RFC3339, v)
	return err == nil
}
