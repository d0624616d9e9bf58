package prompt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/google/jsonschema-go/jsonschema"
)

func toolNames(tools []api.Tool) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

func TestToolSets(t *testing.T) {
	tests := []struct {
		name  string
		tools []api.Tool
		want  []string
	}{
		{"QueryTools", QueryTools(), []string{ToolSearch, ToolRead, ToolList, ToolRelations}},
		// Curation can look before it adds, but cannot follow relations.
		{"CurateTools", CurateTools(), []string{ToolCurate, ToolSearch, ToolRead, ToolList}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolNames(tc.tools); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("names %q, want %q", got, tc.want)
			}
			for _, tl := range tc.tools {
				if strings.TrimSpace(tl.Description) == "" {
					t.Errorf("%s has no description", tl.Name)
				}
			}
		})
	}
	// A tool offered in both sets is the same tool.
	q, c := QueryTools(), CurateTools()
	for _, a := range q {
		for _, b := range c {
			if a.Name == b.Name && !reflect.DeepEqual(a, b) {
				t.Errorf("%s differs between the sets", a.Name)
			}
		}
	}
	// Each call returns its own list.
	q[0].Name = "changed"
	if QueryTools()[0].Name != ToolSearch {
		t.Error("QueryTools returns a shared slice")
	}
}

// schemaKeywords are the JSON Schema keywords the tool schemas may use; a
// misspelt keyword would be silently ignored by the model's host.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "minLength": true, "minimum": true, "maximum": true,
	"default": true, "enum": true, "oneOf": true, "description": true,
}

// checkSchema walks a decoded schema: known keywords only, every object
// with properties, every required name a property.
func checkSchema(t *testing.T, at string, s map[string]any) {
	t.Helper()
	for k := range s {
		if !schemaKeywords[k] {
			t.Errorf("%s: unknown keyword %q", at, k)
		}
	}
	props, _ := s["properties"].(map[string]any)
	if s["type"] == "object" && props == nil {
		t.Errorf("%s: an object without properties", at)
	}
	if req, ok := s["required"]; ok {
		list, _ := req.([]any)
		if len(list) == 0 {
			t.Errorf("%s: required is %v, want a non-empty list", at, req)
		}
		for _, r := range list {
			if _, ok := props[fmt.Sprint(r)]; !ok {
				t.Errorf("%s: required %v is not a property", at, r)
			}
		}
	}
	for name, p := range props {
		sub, ok := p.(map[string]any)
		if !ok {
			t.Errorf("%s.%s: not a schema", at, name)
			continue
		}
		checkSchema(t, at+"."+name, sub)
	}
	if it, ok := s["items"].(map[string]any); ok {
		checkSchema(t, at+"[]", it)
	}
	if alts, ok := s["oneOf"].([]any); ok {
		for i, a := range alts {
			sub, _ := a.(map[string]any)
			checkSchema(t, fmt.Sprintf("%s|%d", at, i), sub)
		}
	}
}

func TestToolSchemas(t *testing.T) {
	tools := append(QueryTools(), CurateTools()[0])
	required := map[string][]string{
		ToolSearch: {"query"}, ToolRead: {"path"}, ToolList: nil, ToolRelations: {"path"}, ToolCurate: {"operations"},
	}
	for _, tl := range tools {
		t.Run(tl.Name, func(t *testing.T) {
			var s map[string]any
			if err := json.Unmarshal(tl.Parameters, &s); err != nil {
				t.Fatalf("parameters are not JSON: %v", err)
			}
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Errorf("type %v additionalProperties %v, want an object that refuses other arguments", s["type"], s["additionalProperties"])
			}
			// The list tool has no required argument, and no "required" at all.
			var req []string
			list, _ := s["required"].([]any)
			for _, r := range list {
				req = append(req, r.(string))
			}
			if !reflect.DeepEqual(req, required[tl.Name]) {
				t.Errorf("required %q, want %q", req, required[tl.Name])
			}
			checkSchema(t, tl.Name, s)
			var js jsonschema.Schema
			if err := json.Unmarshal(tl.Parameters, &js); err != nil {
				t.Fatalf("not a JSON Schema: %v", err)
			}
			if _, err := js.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
				t.Errorf("Resolve: %v", err)
			}
		})
	}
}

// Arguments a model may send, checked against each schema.
func TestToolSchemasValidate(t *testing.T) {
	op := func(extra string) string {
		return `{"operations": [{"type": "ADD", "path": "eng/billing", "title": "Retry", "reason": "r"` + extra + `}]}`
	}
	tests := []struct {
		tool, args string
		ok         bool
	}{
		{ToolSearch, `{"query": "retry policy"}`, true},
		{ToolSearch, `{"query": "retry", "limit": 20}`, true},
		{ToolSearch, `{}`, false},
		{ToolSearch, `{"query": ""}`, false},
		{ToolSearch, `{"query": "x", "limit": 0}`, false},
		{ToolSearch, `{"query": "x", "limit": 21}`, false},
		{ToolSearch, `{"query": "x", "limit": 2.5}`, false},
		{ToolSearch, `{"query": "x", "page": 2}`, false},
		{ToolRead, `{"path": "eng/billing/retry.md"}`, true},
		{ToolRead, `{"path": 3}`, false},
		{ToolList, `{}`, true},
		{ToolList, `{"path": "", "depth": 4}`, true},
		{ToolList, `{"depth": 5}`, false},
		{ToolRelations, `{"path": "a/b.md", "direction": "backward"}`, true},
		{ToolRelations, `{"path": "a/b.md", "direction": "sideways"}`, false},
		{ToolCurate, op(``), true},
		{ToolCurate, op(`, "content": {"narrative": "free prose", "facts": [{"statement": "s"}], "relations": ["a/b.md"]}`), true},
		{ToolCurate, op(`, "content": {"narrative": {"rules": "r", "examples": "e"}}`), true},
		{ToolCurate, op(`, "content": {"narrative": 3}`), false},
		{ToolCurate, op(`, "content": {"facts": [{"subject": "no statement"}]}`), false},
		{ToolCurate, `{"operations": []}`, false},
		{ToolCurate, `{"operations": [{"type": "ADD", "path": "p"}]}`, false},
		{ToolCurate, `{"operations": [{"type": "ADD", "path": "p", "reason": ""}]}`, false},
		{ToolCurate, `{"operations": [{"type": "RENAME", "path": "p", "reason": "r"}]}`, false},
		{ToolCurate, `{"ops": []}`, false},
	}
	resolved := map[string]*jsonschema.Resolved{}
	for _, tl := range append(QueryTools(), CurateTools()...) {
		var js jsonschema.Schema
		if err := json.Unmarshal(tl.Parameters, &js); err != nil {
			t.Fatal(err)
		}
		rs, err := js.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		resolved[tl.Name] = rs
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			err := resolved[tc.tool].Validate(args)
			if (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// The limits the schemas and descriptions state are the package's.
func TestToolLimits(t *testing.T) {
	params := func(name string) map[string]any {
		for _, tl := range append(QueryTools(), CurateTools()...) {
			if tl.Name == name {
				var s map[string]any
				if err := json.Unmarshal(tl.Parameters, &s); err != nil {
					t.Fatal(err)
				}
				return s["properties"].(map[string]any)
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	limit := params(ToolSearch)["limit"].(map[string]any)
	if limit["maximum"] != float64(SearchMax) || limit["default"] != float64(SearchDefault) || limit["minimum"] != float64(1) {
		t.Errorf("search limit %v, want 1..%d default %d", limit, SearchMax, SearchDefault)
	}
	ops := params(ToolCurate)["operations"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	var types []string
	for _, v := range ops["type"].(map[string]any)["enum"].([]any) {
		types = append(types, v.(string))
	}
	sort.Strings(types)
	if want := []string{api.OpAdd, api.OpDelete, api.OpMerge, api.OpUpdate, api.OpUpsert}; !reflect.DeepEqual(types, want) {
		t.Errorf("curate types %q, want %q", types, want)
	}
	for _, tc := range []struct{ tool, text string }{
		{ToolRead, "8,000 characters"},
		{ToolList, fmt.Sprintf("at most %d lines", ListMaxLines)},
	} {
		for _, tl := range QueryTools() {
			if tl.Name == tc.tool && !strings.Contains(tl.Description, tc.text) {
				t.Errorf("%s description %q lacks %q", tl.Name, tl.Description, tc.text)
			}
		}
	}
	if ReadMaxChars != 8000 {
		t.Errorf("ReadMaxChars = %d, the read tool says 8,000", ReadMaxChars)
	}
}
