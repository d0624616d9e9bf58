package merge

import "testing"

func TestText2(t *testing.T) {
	cases := []struct {
		name, ours, theirs, want string
		conflicts                []Conflict
	}{
		{"same", "a\nb\n", "a\nb\n", "a\nb\n", nil},
		{"theirs adds", "a\nc\n", "a\nb\nc\n", "a\nb\nc\n", nil},
		{"ours adds", "a\nb\nc\n", "a\nc\n", "a\nb\nc\n", nil},
		{"both add apart", "x\na\nc\n", "a\nc\ny\n", "x\na\nc\ny\n", nil},
		{"reworded", "a\nb1\nc\n", "a\nb2\nc\n", "a\nb1\nc\n", []Conflict{{Ours: "b1\n", Theirs: "b2\n"}}},
		{"nothing shared", "p\n", "q\n", "p\n", []Conflict{{Ours: "p\n", Theirs: "q\n"}}},
		{"ours empty", "", "q\n", "q\n", nil},
	}
	for _, c := range cases {
		got, cs := Text2(c.ours, c.theirs)
		if got != c.want || len(cs) != len(c.conflicts) {
			t.Errorf("%s: Text2 = %q with %v, want %q with %v", c.name, got, cs, c.want, c.conflicts)
			continue
		}
		for i := range cs {
			if cs[i] != c.conflicts[i] {
				t.Errorf("%s: conflict %d = %+v, want %+v", c.name, i, cs[i], c.conflicts[i])
			}
		}
	}
}
