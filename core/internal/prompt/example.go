package prompt

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// ExampleJSON is the one operation CurateSystem shows. Its facts are
// invented and specific (a greenhouse, a named valve, odd times), so that a
// copy of them in the tree is recognizable and unlikely to be true of any
// user's material by chance.
const ExampleJSON = `{"type":"ADD","path":"garden/greenhouse","title":"Greenhouse B watering schedule",
 "summary":"greenhouse B tomatoes are watered at 06:10 and 18:40 through the north drip valve",
 "content":{"narrative":{"rules":"Tomatoes in greenhouse B are watered at 06:10 and 18:40. The north drip valve stays closed on rainy days."},
            "facts":[{"subject":"north drip valve","statement":"closed on rainy days","category":"rule"}],
            "tags":["greenhouse","watering"],"keywords":["drip valve","tomatoes"],
            "relations":["garden/greenhouse/soil_sensors.md"]},
 "reason":"record the agreed watering schedule of greenhouse B"}`

// shingleWords is the length of the word sequences compared: four words
// in a row are specific enough that sharing several with the example is
// copying, not coincidence ("the north drip valve" is; "in the" is not).
const shingleWords = 4

// copyThreshold is how many of the example's shingles an operation may
// share, outside the material, before it counts as a copy.
const copyThreshold = 2

var example = sync.OnceValue(parseExample)

type exampleText struct {
	title    string
	shingles map[string]bool
}

func parseExample() exampleText {
	var v map[string]any
	if err := json.Unmarshal([]byte(ExampleJSON), &v); err != nil {
		panic("prompt: ExampleJSON: " + err.Error())
	}
	ex := exampleText{shingles: map[string]bool{}}
	ex.title = strings.Join(words(v["title"].(string)), " ")
	// The operation's type, reason-free structure and key names are what
	// the example is for; only its values are facts.
	for _, s := range stringValues(v) {
		for _, sh := range shingles(words(s)) {
			ex.shingles[sh] = true
		}
	}
	return ex
}

// CopiedExample reports whether an operation's text (its title, summary,
// content and reason as JSON) repeats the invented facts of the example
// while the material does not hold them: the example's title, or at least
// copyThreshold of its four-word sequences. It returns the copied phrase
// for the message to the model. Material that really says the same thing
// (a user whose notes are about greenhouse B) is never refused.
func CopiedExample(title string, op any, material string) (string, bool) {
	mat := map[string]bool{}
	mw := words(material)
	for _, sh := range shingles(mw) {
		mat[sh] = true
	}
	if t := strings.Join(words(title), " "); t != "" && t == example().title && !strings.Contains(" "+strings.Join(mw, " ")+" ", " "+t+" ") {
		return title, true
	}
	var copied []string
	seen := map[string]bool{}
	for _, s := range stringValues(op) {
		for _, sh := range shingles(words(s)) {
			if example().shingles[sh] && !mat[sh] && !seen[sh] {
				seen[sh] = true
				copied = append(copied, sh)
			}
		}
	}
	if len(copied) >= copyThreshold {
		return copied[0], true
	}
	return "", false
}

// stringValues returns every string value inside v (a decoded JSON value, or
// any value that encodes to JSON), keys left out.
func stringValues(v any) []string {
	switch v.(type) {
	case map[string]any, []any, string:
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var d any
		if json.Unmarshal(b, &d) != nil {
			return nil
		}
		v = d
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, x := range t {
				walk(x)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(t[k])
			}
		}
	}
	walk(v)
	return out
}

// words are the lowercase letter-and-digit runs of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func shingles(ws []string) []string {
	var out []string
	for i := 0; i+shingleWords <= len(ws); i++ {
		out = append(out, strings.Join(ws[i:i+shingleWords], " "))
	}
	return out
}
