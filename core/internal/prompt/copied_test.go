package prompt

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

type obj = map[string]any

func TestCopiedExample(t *testing.T) {
	tests := []struct {
		name     string
		title    string
		op       any
		material string
		phrase   string // "" when not copied
	}{
		// The example's title, however it is written, unless the material has it.
		{"the title", "Greenhouse B watering schedule", nil, "", "Greenhouse B watering schedule"},
		{"the title, other case and punctuation", "greenhouse-b: Watering  schedule!", nil, "", "greenhouse-b: Watering  schedule!"},
		{"the title in the material", "Greenhouse B watering schedule", nil, "Notes: the Greenhouse B watering schedule changed.", ""},
		{"a longer title", "Greenhouse B watering schedule v2", nil, "", ""},
		{"a shorter title", "Watering schedule", nil, "", ""},
		{"an empty title", "", nil, "", ""},

		// Two four-word sequences of the example's values are a copy...
		{"the summary", "Tomatoes", obj{"summary": "greenhouse B tomatoes are watered at 06:10 and 18:40 through the north drip valve"}, "", "greenhouse b tomatoes are"},
		{"two sequences", "Valve", obj{"summary": "the north drip valve stays open"}, "", "the north drip valve"},
		{"case and punctuation do not matter", "Valve", obj{"summary": "THE NORTH DRIP-VALVE stays…"}, "", "the north drip valve"},
		{"times split into numbers", "Times", obj{"summary": "watered at 06:10 and 18:40"}, "", "watered at 06 10"},
		// ...one is a coincidence.
		{"one sequence", "Valve", obj{"summary": "close the north drip valve"}, "", ""},
		{"three words", "Valve", obj{"summary": "north drip valve"}, "", ""},
		// Sequences the material holds are the user's own.
		{"material holds both", "Valve", obj{"summary": "the north drip valve stays open"}, "Our north drip valve stays open; the north drip valve leaks.", ""},
		{"material holds one", "Valve", obj{"summary": "the north drip valve stays open"}, "We fixed the north drip valve.", ""},
		// Keys are the shape, not facts.
		{"keys do not count", "x", obj{"the north drip valve stays": "x", "north drip valve stays closed": "y"}, "", ""},
		// Nested values count, in key order.
		{"nested content", "x", obj{"content": obj{
			"narrative": obj{"rules": "Tomatoes in greenhouse B are watered"},
			"facts":     []any{obj{"subject": "north drip valve", "statement": "closed on rainy days"}},
		}}, "", "closed on rainy days"},
		// An operation as the engine holds it, encoded to JSON first.
		{"an api.Operation", "Watering", api.Operation{Type: api.OpAdd, Path: "garden/greenhouse", Title: "Watering", Reason: "record the agreed watering schedule of greenhouse B"}, "", "record the agreed watering"},
		{"an api.Operation of the material", "Watering", api.Operation{Type: api.OpAdd, Path: "garden/greenhouse", Title: "Watering", Reason: "record the agreed watering schedule"}, "Please record the agreed watering schedule.", ""},
		// Something that does not encode has no values.
		{"a value that does not encode", "x", make(chan int), "", ""},
		{"a string", "x", "the north drip valve stays closed", "", "the north drip valve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			phrase, copied := CopiedExample(tc.title, tc.op, tc.material)
			if copied != (tc.phrase != "") || phrase != tc.phrase {
				t.Errorf("CopiedExample(%q, %v, %q) = %q, %v; want %q, %v", tc.title, tc.op, tc.material, phrase, copied, tc.phrase, tc.phrase != "")
			}
		})
	}
}

// The example itself, sent back as an operation, is a copy; the example
// pasted as material is not.
func TestCopiedExampleOfItself(t *testing.T) {
	var op map[string]any
	if err := json.Unmarshal([]byte(ExampleJSON), &op); err != nil {
		t.Fatalf("ExampleJSON: %v", err)
	}
	for _, k := range []string{"type", "path", "title", "summary", "content", "reason"} {
		if _, ok := op[k]; !ok {
			t.Errorf("ExampleJSON lacks %q", k)
		}
	}
	title := op["title"].(string)
	if phrase, ok := CopiedExample(title, op, ""); !ok || phrase != title {
		t.Errorf("the example: %q %v, want the title", phrase, ok)
	}
	if phrase, ok := CopiedExample("Other title", op, ""); !ok || phrase == "" {
		t.Errorf("the example under another title: %q %v, want a copy", phrase, ok)
	}
	if phrase, ok := CopiedExample(title, op, ExampleJSON); ok {
		t.Errorf("the example as material: %q, want no copy", phrase)
	}
}

func TestStringValues(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want []string
	}{
		{"string", "s", []string{"s"}},
		{"map in key order", obj{"b": "2", "a": "1", "c": []any{"3", obj{"d": "4"}, 5.0, true, nil}}, []string{"1", "2", "3", "4"}},
		// A struct goes through JSON: its values in the order of its JSON keys.
		{"struct through JSON", api.Fact{Subject: "s", Statement: "t"}, []string{"t", "s"}},
		{"number", 3, nil},
		{"nil", nil, nil},
		{"does not encode", func() {}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := stringValues(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stringValues(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
