package tree

import (
	"reflect"
	"testing"
	"time"
)

func TestReadNoteMatter(t *testing.T) {
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	tests := []struct {
		name, text, body string
		want             NoteMatter
	}{
		{"no front matter", "# A\nbody\n", "# A\nbody\n", NoteMatter{}},
		{"every mapped key", "---\ntitle: A note\nsummary: Short.\ndescription: Longer.\ntags: [x, z]\nkeywords: k1, k2\n" +
			"aliases: [Alt]\nalias: Other\ndate: 2024-01-02\nlastmod: 2024-02-03T04:05:06Z\nrelated: [\"[[b]]\"]\n---\nbody\n", "body\n",
			NoteMatter{Title: "A note", Summary: "Short.", Tags: []string{"x", "z"}, Keywords: []string{"k1", "k2", "Alt", "Other"},
				Aliases: []string{"Alt", "Other"}, Links: []string{"[[b]]"}, Created: day("2024-01-02T00:00:00Z"), Updated: day("2024-02-03T04:05:06Z"),
				// A second key for a field already given is kept, not lost.
				Extra: []KeyValue{{Key: "description", Value: "Longer."}}}},
		{"Obsidian tags in one value", "---\ntags: \"#a #b, c\"\n---\n", "",
			NoteMatter{Tags: []string{"a", "b", "c"}}},
		{"a list's tags are kept whole", "---\ntags: [machine learning, '#ops']\n---\n", "",
			NoteMatter{Tags: []string{"machine learning", "ops"}}},
		{"keys the mapping cannot read are kept", "---\ndate: next tuesday\ntitle: [a, b]\nimportance: 80\nstatus: draft\n---\n", "",
			NoteMatter{Extra: []KeyValue{{Key: "date", Value: "next tuesday"}, {Key: "source_title", Value: "[a, b]"}, {Key: "importance", Value: "80"}, {Key: "status", Value: "draft"}}}},
		{"keys are matched in any case", "---\nTitle: T\nCreatedAt: 2024-01-02T00:00:00Z\n---\n", "",
			NoteMatter{Title: "T", Created: day("2024-01-02T00:00:00Z")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, body, err := ReadNoteMatter(tc.text)
			if err != nil || body != tc.body || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v body %q err %v\nwant %+v body %q", got, body, err, tc.want, tc.body)
			}
		})
	}
	for _, bad := range []string{"---\ntitle: [unclosed\n---\nbody\n", "---\ntitle: never closed\n"} {
		if _, body, err := ReadNoteMatter(bad); err == nil || body != bad {
			t.Errorf("%q: body %q err %v, want an error and the whole text", bad, body, err)
		}
	}
}
