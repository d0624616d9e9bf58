package main

import (
	"math"
	"testing"
)

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		ds   []float64
		want string
	}{
		{[]float64{0.022, 0, 0.0004}, "+"},
		{[]float64{0, -0.0004}, "0"}, // prints as 0.000
		{[]float64{0.022, -0.022}, "±"},
		{[]float64{-0.003, math.NaN()}, "−"},
	} {
		if got := verdict(tc.ds...); got != tc.want {
			t.Errorf("verdict(%v) = %s, want %s", tc.ds, got, tc.want)
		}
	}
}
