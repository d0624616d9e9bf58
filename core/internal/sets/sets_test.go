package sets

import "testing"

func TestJaccard(t *testing.T) {
	cases := []struct {
		a, b []string
		want float64
	}{
		{nil, nil, 1},
		{[]string{"a"}, nil, 0},
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}, 1},
		{[]string{"a", "b", "c", "d"}, []string{"b", "c", "e"}, 0.4},
		{[]string{"a", "c"}, []string{"b", "d"}, 0},
	}
	for _, c := range cases {
		if got := Jaccard(c.a, c.b); got != c.want {
			t.Errorf("Jaccard(%v, %v) = %g, want %g", c.a, c.b, got, c.want)
		}
		if got := Jaccard(c.b, c.a); got != c.want {
			t.Errorf("Jaccard(%v, %v) = %g, want %g (symmetric)", c.b, c.a, got, c.want)
		}
	}
	if got := Jaccard([]uint32{1, 2, 3, 5, 8}, []uint32{2, 3, 5}); got != 0.6 {
		t.Errorf("Jaccard of hashes: %g", got)
	}
}
