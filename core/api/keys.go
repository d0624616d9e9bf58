package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Curate operations are decoded strictly: a key an object does not have
// is refused, naming the key and the ones allowed. A misspelt "contnet"
// would otherwise be dropped and its text lost while the operation
// succeeds. Values stay lenient (a string for a list, a string fact), as
// language models write them; keys match without regard to case, as
// encoding/json matches them.

// The keys of each object of an operation.
var (
	operationKeys  = []string{"type", "path", "title", "summary", "content", "reason", "mergeTarget", "to", "base", "targetBase"}
	contentKeys    = []string{"rawConcept", "narrative", "facts", "snippets", "relations", "tags", "keywords"}
	rawConceptKeys = []string{"task", "changes", "files", "flow", "timestamp", "author"}
	narrativeKeys  = []string{"text", "structure", "dependencies", "highlights", "rules", "examples", "diagrams"}
	factKeys       = []string{"subject", "statement", "category"}
	curateKeys     = []string{"operations"}
)

// checkKeys refuses a key of the JSON object b that allowed lacks. what
// names the object in the message; elsewhere names, for keys that belong
// in another object, where they go. A value that is not an object is left
// to the decoder.
func checkKeys(b []byte, what string, allowed []string, elsewhere map[string]string) error {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil // the decoder says what is wrong
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, k) }) {
			continue
		}
		msg := fmt.Sprintf("%s: unknown key %q", what, k)
		if where, ok := elsewhere[strings.ToLower(k)]; ok {
			msg += fmt.Sprintf(" (it belongs in %s)", where)
		} else if near := nearest(k, allowed); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("%s; %s has %s", msg, what, strings.Join(allowed, ", "))
	}
	return nil
}

// misplaced tells where keys of one object go when they appear in
// another: content's keys in an operation, an operation's in content.
var (
	inContent   = lowerMap(contentKeys, `"content"`)
	inOperation = lowerMap([]string{"title", "summary", "reason", "type", "path", "mergeTarget", "to", "base", "targetBase"}, "the operation itself")
)

func lowerMap(keys []string, where string) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[strings.ToLower(k)] = where
	}
	return m
}

// nearest is the allowed key within two edits of k (without regard to
// case), or "".
func nearest(k string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(k), strings.ToLower(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count
// one edit, as in "contnet").
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// UnmarshalJSON decodes an operation, refusing keys it does not have.
func (o *Operation) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "operation", operationKeys, inContent); err != nil {
		return err
	}
	type plain Operation // without this method
	return json.Unmarshal(b, (*plain)(o))
}

// UnmarshalJSON decodes the parameters of "curate", refusing keys they do
// not have and naming the operation a decoding error is about.
func (p *CurateParams) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "params", curateKeys, nil); err != nil {
		return err
	}
	var in struct {
		Operations []json.RawMessage `json:"operations"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	ops := make([]Operation, len(in.Operations))
	for i, raw := range in.Operations {
		if err := json.Unmarshal(raw, &ops[i]); err != nil {
			return fmt.Errorf("operation %d: %w", i+1, err)
		}
	}
	p.Operations = ops
	if in.Operations == nil {
		p.Operations = nil
	}
	return nil
}
