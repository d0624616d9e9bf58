package mcp

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/google/jsonschema-go/jsonschema"
)

// The schemas are inferred from the Go types the engine itself decodes and
// encodes (so they cannot drift from docs/ABI.md), then given what
// inference cannot see: bounds, defaults, enums and the descriptions an
// agent reads.

// inputSchema infers the schema of T and applies the edits to it.
func inputSchema[T any](edits ...func(*jsonschema.Schema)) *jsonschema.Schema {
	s := mustSchema[T](nil)
	for _, edit := range edits {
		if edit != nil {
			edit(s)
		}
	}
	return s
}

// outputSchema infers the schema of the result type T.
func outputSchema[T any]() *jsonschema.Schema { return mustSchema[T](nil) }

func mustSchema[T any](opts *jsonschema.ForOptions) *jsonschema.Schema {
	s, err := jsonschema.For[T](opts)
	if err != nil {
		panic(fmt.Sprintf("arbor mcp: schema of %T: %v", *new(T), err))
	}
	return s
}

// narrativeParts are the named parts of an object narrative.
var narrativeParts = []string{"text", "structure", "dependencies", "highlights", "rules", "examples", "diagrams"}

// curateSchema is the input schema of arbor-curate: api.CurateParams,
// where a narrative is a string or an object of parts (api.Narrative
// decodes both), content is optional (DELETE needs none) and type is one of
// the five operations.
func curateSchema() *jsonschema.Schema {
	narrative := narrativeSchema()
	s := mustSchema[api.CurateParams](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[api.Narrative](): narrative,
	}})
	ops := s.Properties["operations"]
	ops.Description = "the operations, applied in order; each one succeeds or fails on its own"
	ops.MinItems = new(1)
	op := ops.Items
	op.Required = without(op.Required, "content")
	op.Properties["type"].Enum = []any{api.OpAdd, api.OpUpdate, api.OpUpsert, api.OpMerge, api.OpDelete, api.OpMove}
	describe(op, map[string]string{
		"type":                    "ADD, UPDATE, UPSERT, MERGE, DELETE or MOVE",
		"path":                    "a folder domain/topic or domain/topic/subtopic (lowercase snake_case; the entry's file is named after title), or a full entry path ending in .md",
		"title":                   "the entry's title; with a folder path it also names the file",
		"summary":                 "one line that says what the entry holds, shown in search results",
		"content":                 "the knowledge to write (not needed for DELETE, refused with MOVE)",
		"reason":                  "why this operation is made: written to the entry's Reason section and the audit log (required)",
		"mergeTarget":             "MERGE only: the entry that survives and receives path's content",
		"to":                      moveToDescription,
		"base":                    "the version of the entry at path this operation was made from (the version arbor-read returned): if the file holds another now, the operation is a conflict and writes nothing. The server fills it in from your last arbor-read of the entry when you leave it out",
		"targetBase":              "MERGE only: base for the mergeTarget",
		"content.narrative":       narrative.Description,
		"content.facts":           "short factual statements: {subject, statement, category}",
		"content.snippets":        "verbatim code or text worth keeping as is",
		"content.rawConcept":      "provenance: the task, the changes, the files involved, the flow, a timestamp and the author",
		"content.relations":       "paths of related entries (they get a backlink)",
		"content.tags":            "tags, e.g. billing",
		"content.keywords":        "words people would search for that the text may not contain",
		"content.facts.statement": "the fact itself",
	})
	return s
}

// narrativeSchema is a narrative as api.Narrative reads and writes it: a
// string, or an object of its parts.
func narrativeSchema() *jsonschema.Schema {
	narrative := &jsonschema.Schema{
		Types:                []string{"string", "object"},
		Description:          "free prose (a string), or an object of named parts, each a string: " + strings.Join(narrativeParts[1:], ", ") + " (text: prose outside the parts)",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	for _, p := range narrativeParts {
		narrative.Properties[p] = &jsonschema.Schema{Type: "string"}
	}
	return narrative
}

// tidyOutputSchema is the output schema of arbor-tidy: api.TidyResult,
// whose operations write a narrative as curate reads it.
func tidyOutputSchema() *jsonschema.Schema {
	return mustSchema[api.TidyResult](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[api.Narrative](): narrativeSchema(),
	}})
}

// describe sets descriptions of properties below s, named by dotted paths
// through properties and array items.
func describe(s *jsonschema.Schema, descs map[string]string) {
	for path, d := range descs {
		p := s
		for _, name := range strings.Split(path, ".") {
			for p.Items != nil {
				p = p.Items
			}
			p = p.Properties[name]
			if p == nil {
				panic("arbor mcp: no property " + path)
			}
		}
		p.Description = d
	}
}

func without(list []string, name string) []string {
	var out []string
	for _, s := range list {
		if s != name {
			out = append(out, s)
		}
	}
	return out
}

// nodeSchema is the output schema of arbor-tree: api.Node is recursive,
// which inference refuses, so the node refers to itself through $defs.
func nodeSchema() *jsonschema.Schema {
	// Schemas must form a tree: each use gets its own copy.
	node := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: []string{"name", "path", "kind"}, Properties: map[string]*jsonschema.Schema{
			"name":  {Type: "string", Description: "the file or folder name (empty for the root)"},
			"path":  {Type: "string", Description: "the path relative to the memory root; pass an entry's to arbor-read"},
			"kind":  {Type: "string", Enum: []any{"root", "domain", "topic", "subtopic", "folder", "entry"}},
			"title": {Type: "string", Description: "the entry's title, or the folder's context.md title"},
			"children": {Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/node"},
				Description: "folders first, then entries, each by name; left out at the depth limit"},
		}}
	}
	s := node()
	s.Defs = map[string]*jsonschema.Schema{"node": node()}
	return s
}
