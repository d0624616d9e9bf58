package tree

import (
	"strings"
	"time"
)

// NoteMatter is the front matter of a markdown note from outside the tree
// (an Obsidian vault, a static site's content, a folder of notes) mapped
// onto an entry's, as ingestion writes it (docs/ABI.md §4.11):
//
//	title                                          → Title
//	summary, description                           → Summary (the first given)
//	tags, tag                                      → Tags
//	keywords, aliases, alias                       → Keywords (aliases also name the note for wikilinks)
//	created, createdAt, created_at, date           → Created (the first given)
//	updated, updatedAt, updated_at, modified, lastmod → Updated (the first given)
//	related                                        → Links (resolved as the note's links)
//
// Every other key (importance, maturity, status, anything of the user's)
// is kept in Extra, in order, as the entry keeps unknown keys; a key named
// above whose value does not read as the mapping needs (a date that is not
// a date) is kept there too, as "source_<key>" when its name is one the
// entry's front matter owns, so that nothing is lost.
type NoteMatter struct {
	Title, Summary   string
	Tags, Keywords   []string
	Aliases, Links   []string
	Created, Updated time.Time
	Extra            []KeyValue
}

// noteKeys maps a note's front-matter key (lowercase) to the NoteMatter
// field it fills.
var noteKeys = map[string]string{
	"title": "title", "summary": "summary", "description": "summary",
	"tags": "tags", "tag": "tags", "keywords": "keywords",
	"aliases": "aliases", "alias": "aliases",
	"created": "created", "createdat": "created", "created_at": "created", "date": "created",
	"updated": "updated", "updatedat": "updated", "updated_at": "updated", "modified": "updated", "lastmod": "updated",
	"related": "links",
}

// ReadNoteMatter splits a note's text (LF line endings) into its mapped
// front matter and its body. A text without front matter is all body. A
// front matter that does not parse (malformed YAML, a "---" never closed)
// is an error saying why, and the caller keeps the whole text.
func ReadNoteMatter(text string) (NoteMatter, string, error) {
	var m NoteMatter
	ms, body, err := readFrontMatter(text)
	if err != nil {
		return m, text, err
	}
	seen := map[string]bool{}
	for _, it := range ms {
		k := keyString(it.Key)
		field := noteKeys[strings.ToLower(k)]
		if field == "" || seen[field] && field != "aliases" {
			m.keep(k, it.Value)
			continue
		}
		if !m.set(field, it.Value) {
			m.keep(k, it.Value)
			continue
		}
		seen[field] = true
	}
	return m, body, nil
}

// set fills field from a value and reports whether the value reads as it
// needs to.
func (m *NoteMatter) set(field string, v interface{}) bool {
	switch field {
	case "title", "summary":
		s, err := scalarField(v)
		if err != nil {
			return false
		}
		if field == "title" {
			m.Title = s
		} else {
			m.Summary = s
		}
	case "tags":
		l, err := stringList(v, false)
		if err != nil {
			return false
		}
		// A list's items are tags as written; one value lists them split
		// at commas or spaces ("tags: a, b", Obsidian's "tags: #a #b").
		_, isList := v.([]interface{})
		for _, t := range l {
			parts := []string{t}
			if !isList {
				parts = strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
			}
			for _, f := range parts {
				if f = strings.TrimSpace(strings.TrimLeft(f, "#")); f != "" {
					m.Tags = append(m.Tags, f)
				}
			}
		}
	case "keywords", "aliases", "links":
		l, err := stringList(v, field == "keywords")
		if err != nil {
			return false
		}
		switch field {
		case "keywords":
			m.Keywords = append(m.Keywords, l...)
		case "aliases":
			m.Aliases = append(m.Aliases, l...)
			m.Keywords = append(m.Keywords, l...)
		default:
			m.Links = l
		}
	case "created", "updated":
		t, err := parseTime(v)
		if err != nil || t.IsZero() {
			return false
		}
		if field == "created" {
			m.Created = t
		} else {
			m.Updated = t
		}
	}
	return true
}

// keep adds a key to Extra as the codec keeps unknown keys; a name the
// entry's own front matter owns is kept as "source_<key>".
func (m *NoteMatter) keep(k string, v interface{}) {
	if knownKeys[k] {
		k = "source_" + k
	}
	for i, kv := range m.Extra {
		if kv.Key == k {
			m.Extra[i].Value = yamlFlow(v, ctxValue)
			return
		}
	}
	m.Extra = append(m.Extra, KeyValue{Key: k, Value: yamlFlow(v, ctxValue)})
}
