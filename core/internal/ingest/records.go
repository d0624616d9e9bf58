package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// value is a decoded JSON value that keeps the order of object keys, so
// that a record renders its fields as written.
type value struct {
	obj  []member // an object (isObj)
	arr  []value  // an array (isArr)
	text string   // a string, or a number/bool/null as written
	kind byte     // 'o', 'a', 's' (string), 'l' (literal)
}

type member struct {
	key string
	val value
}

func (v value) get(key string) (value, bool) {
	for _, m := range v.obj {
		if m.key == key {
			return m.val, true
		}
	}
	return value{}, false
}

// str returns the value of key when it is a string.
func (v value) str(key string) string {
	if x, ok := v.get(key); ok && x.kind == 's' {
		return x.text
	}
	return ""
}

// decodeValue reads one JSON value from dec, keeping key order.
func decodeValue(dec *json.Decoder) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := value{kind: 'o', obj: []member{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return value{}, err
				}
				val, err := decodeValue(dec)
				if err != nil {
					return value{}, err
				}
				v.obj = append(v.obj, member{kt.(string), val})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := value{kind: 'a', arr: []value{}}
			for dec.More() {
				val, err := decodeValue(dec)
				if err != nil {
					return value{}, err
				}
				v.arr = append(v.arr, val)
			}
			_, err := dec.Token()
			return v, err
		}
	case string:
		return value{kind: 's', text: t}, nil
	case json.Number:
		return value{kind: 'l', text: t.String()}, nil
	case bool:
		return value{kind: 'l', text: fmt.Sprint(t)}, nil
	case nil:
		return value{kind: 'l', text: "null"}, nil
	}
	return value{}, fmt.Errorf("unexpected token %v", tok)
}

// compact renders v as one line of JSON, keys in their order.
func (v value) compact() string {
	switch v.kind {
	case 'o':
		parts := make([]string, len(v.obj))
		for i, m := range v.obj {
			k, _ := json.Marshal(m.key)
			parts[i] = string(k) + ":" + m.val.compact()
		}
		return "{" + strings.Join(parts, ",") + "}"
	case 'a':
		parts := make([]string, len(v.arr))
		for i, x := range v.arr {
			parts[i] = x.compact()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case 's':
		b, _ := json.Marshal(v.text)
		return string(b)
	}
	return v.text
}

// inline renders a field's value for a "- **key**: value" line: strings as
// they are, lists of scalars joined by commas, anything else as JSON.
func (v value) inline() string {
	switch v.kind {
	case 's', 'l':
		return strings.TrimSpace(v.text)
	case 'a':
		var parts []string
		for _, x := range v.arr {
			if x.kind != 's' && x.kind != 'l' {
				return v.compact()
			}
			parts = append(parts, strings.TrimSpace(x.text))
		}
		return strings.Join(parts, ", ")
	}
	return v.compact()
}

// recordText renders a record: an object as one "- **key**: value" line per
// field (empty ones left out), any other value as itself.
func recordText(v value) string {
	if v.kind != 'o' {
		if v.kind == 'a' {
			return v.compact()
		}
		return strings.TrimSpace(v.text)
	}
	var b strings.Builder
	for _, m := range v.obj {
		t := m.val.inline()
		if t == "" || t == "null" {
			continue
		}
		if strings.Contains(t, "\n") {
			t = strings.ReplaceAll(strings.TrimSpace(t), "\n", "\n  ")
		}
		fmt.Fprintf(&b, "- **%s**: %s\n", m.key, t)
	}
	return strings.TrimSpace(b.String())
}

// titleFields are the fields that name a record, in order of preference.
var titleFields = []string{"title", "name", "subject", "summary", "label", "id", "key"}

// recordTitle names a record by its first title field, else fallback.
func recordTitle(v value, fallback string) string {
	for _, f := range titleFields {
		for _, m := range v.obj {
			// A null names nothing, as null fields say nothing in the text.
			named := m.val.kind == 's' || m.val.kind == 'l' && m.val.text != "null"
			if strings.EqualFold(m.key, f) && named && strings.TrimSpace(m.val.text) != "" {
				return shortTitle(m.val.text, fallback)
			}
		}
	}
	return fallback
}

// jsonError turns a decoding error into a message with the line.
func jsonError(text string, err error, offset int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return badf("malformed JSON: unexpected end of input")
	}
	offset = min(max(offset, 0), int64(len(text)))
	return badf("malformed JSON at line %d: %v", lineAt(text, int(offset)), err)
}

// splitJSON splits a JSON file: chat transcripts (see chat.go) by turn or
// session; an array by element; an object by top-level key; anything else
// is one record.
func splitJSON(s *source) (api.Format, error) {
	dec := json.NewDecoder(strings.NewReader(s.text))
	dec.UseNumber()
	type span struct{ from, to int }
	var root value
	var spans []span
	// Arrays are read element by element to know each record's lines.
	tok, err := dec.Token()
	if err != nil {
		return api.FormatJSON, jsonError(s.text, err, dec.InputOffset())
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		root = value{kind: 'a', arr: []value{}}
		lc := lineCounter{text: s.text, line: 1}
		for dec.More() {
			from := lc.at(skipSpace(s.text, dec.InputOffset()))
			v, err := decodeValue(dec)
			if err != nil {
				return api.FormatJSON, jsonError(s.text, err, dec.InputOffset())
			}
			root.arr = append(root.arr, v)
			spans = append(spans, span{from, lc.at(dec.InputOffset())})
		}
		if _, err := dec.Token(); err != nil {
			return api.FormatJSON, jsonError(s.text, err, dec.InputOffset())
		}
	} else {
		dec = json.NewDecoder(strings.NewReader(s.text))
		dec.UseNumber()
		if root, err = decodeValue(dec); err != nil {
			return api.FormatJSON, jsonError(s.text, err, dec.InputOffset())
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return api.FormatJSON, badf("malformed JSON at line %d: more than one value (JSON Lines files end in .jsonl)", lineAt(s.text, int(dec.InputOffset())))
	}
	if convs, ok, err := chatFromJSON(root); ok {
		if err != nil {
			return api.FormatChat, err
		}
		for _, c := range convs {
			layoutChat(s, c)
		}
		return api.FormatChat, nil
	}
	folder := s.folder("data", s.topic())
	switch root.kind {
	case 'a':
		for i, v := range root.arr {
			n := fmt.Sprintf("Record %d", i+1)
			s.add(Piece{Folder: folder, Title: recordTitle(v, n), Text: recordText(v), Task: fmt.Sprintf("%s (%s)", n, lines(spans[i].from, spans[i].to))})
		}
	case 'o':
		for _, m := range root.obj {
			text := recordText(m.val)
			if m.val.kind != 'o' {
				text = m.val.inline()
			}
			s.add(Piece{Folder: folder, Title: m.key, Text: text, Task: fmt.Sprintf("Key %q", m.key)})
		}
	default:
		s.add(Piece{Folder: folder, Title: s.stem[strings.LastIndexByte(s.stem, '/')+1:], Text: recordText(root), Task: "Value"})
	}
	return api.FormatJSON, nil
}

// lineCounter gives the lines of increasing offsets in one pass over the
// text, where lineAt would rescan it from the start for every record.
type lineCounter struct {
	text string
	off  int64
	line int
}

func (c *lineCounter) at(off int64) int {
	off = min(off, int64(len(c.text)))
	if off > c.off {
		c.line += strings.Count(c.text[c.off:off], "\n")
		c.off = off
	}
	return c.line
}

// skipSpace returns the offset of the first non-space byte at or after off
// (the decoder's offset sits before the separating comma and spaces).
func skipSpace(text string, off int64) int64 {
	for off < int64(len(text)) && strings.IndexByte(" \t\r\n,", text[off]) >= 0 {
		off++
	}
	return off
}

// splitJSONL splits JSON Lines: one record per non-blank line. A file whose
// every line is a chat message ({role, content}) is one chat session.
func splitJSONL(s *source) (api.Format, error) {
	var recs []value
	var at []int
	for i, l := range strings.Split(s.text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		v, err := decodeValue(dec)
		if err == nil {
			if _, e := dec.Token(); e != io.EOF {
				err = errors.New("more than one value on the line")
			}
		}
		if err != nil {
			return api.FormatJSONL, badf("malformed JSON on line %d: %v", i+1, err)
		}
		recs = append(recs, v)
		at = append(at, i+1)
	}
	if len(recs) > 0 {
		if conv, ok := chatFromMessages(value{kind: 'a', arr: recs}); ok {
			layoutChat(s, conv)
			return api.FormatChat, nil
		}
	}
	folder := s.folder("data", s.topic())
	for i, v := range recs {
		n := fmt.Sprintf("Record %d", i+1)
		s.add(Piece{Folder: folder, Title: recordTitle(v, n), Text: recordText(v), Task: fmt.Sprintf("%s (line %d)", n, at[i])})
	}
	return api.FormatJSONL, nil
}

// splitCSV splits a CSV or TSV file by row: the first row names the
// columns, every other row becomes an entry of "- **Column**: value" lines.
// Rows with another number of fields, or unbalanced quotes, refuse the file.
func splitCSV(s *source, comma rune) error {
	r := csv.NewReader(strings.NewReader(s.text))
	r.Comma = comma
	header, err := r.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return badf("malformed %s: %v", csvName(comma), err)
	}
	for i, h := range header {
		header[i] = strings.TrimSpace(h)
		if header[i] == "" {
			header[i] = fmt.Sprintf("Column %d", i+1)
		}
	}
	titleCol := -1
	for _, f := range titleFields {
		for i, h := range header {
			if titleCol < 0 && strings.EqualFold(h, f) {
				titleCol = i
			}
		}
	}
	folder := s.folder("data", s.topic())
	type row struct {
		fields []string
		line   int
	}
	var rows []row
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return badf("malformed %s: %v", csvName(comma), err)
		}
		line, _ := r.FieldPos(0)
		rows = append(rows, row{rec, line})
	}
	for n, rw := range rows {
		var b bytes.Buffer
		title := ""
		for i, v := range rw.fields {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			if title == "" && (titleCol < 0 || i == titleCol) {
				title = shortTitle(v, "")
			}
			fmt.Fprintf(&b, "- **%s**: %s\n", header[i], strings.ReplaceAll(v, "\n", "\n  "))
		}
		if b.Len() == 0 {
			continue
		}
		label := fmt.Sprintf("Row %d", n+1)
		if title == "" {
			title = label
		}
		s.add(Piece{Folder: folder, Title: title, Text: strings.TrimSpace(b.String()), Task: fmt.Sprintf("%s (line %d)", label, rw.line)})
	}
	return nil
}

func csvName(comma rune) string {
	if comma == '\t' {
		return "TSV"
	}
	return "CSV"
}
