package atoms

import "testing"

func TestDurations(t *testing.T) {
	cases := map[string]string{
		"How many days ago did I meet Emma?":                                   "How many days ago",
		"How many weeks had passed since I recovered from the flu?":            "How many weeks had passed",
		"how many months passed between Andrew adopting Toby and Buddy?":       "how many months passed",
		"How many days before the 'Rack Fest' did I go to the Tuesday event?":  "How many days before",
		"How long ago did we move the billing cron?":                           "How long ago",
		"How many days a week do I attend fitness classes?":                    "",
		"How long has Jolene been doing yoga?":                                 "",
		"How many days did I spend in Hawaii?":                                 "",
		"Three days ago I met Emma; how many years have gone by since school?": "how many years have gone by",
	}
	for q, want := range cases {
		got := Durations(q)
		switch {
		case want == "" && len(got) != 0:
			t.Errorf("Durations(%q) = %v, want none", q, got)
		case want != "" && (len(got) != 1 || got[0].Text != want || q[got[0].Start:got[0].End] != want):
			t.Errorf("Durations(%q) = %v, want %q", q, got, want)
		}
	}
}

func FuzzDurations(f *testing.F) {
	f.Add("How many days ago did I meet Emma?")
	f.Add("how long ago… 価格 \xff how many weeks have passed")
	f.Fuzz(func(t *testing.T, q string) {
		for _, p := range Durations(q) {
			if p.Start < 0 || p.End > len(q) || p.Start > p.End || q[p.Start:p.End] != p.Text {
				t.Fatalf("Durations(%q): phrase %+v out of place", q, p)
			}
		}
	})
}
