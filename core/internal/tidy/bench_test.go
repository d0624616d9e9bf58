package tidy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func BenchmarkSignature(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var ws []string
	for range 224 {
		ws = append(ws, fmt.Sprintf("w%d", r.IntN(5000)))
	}
	text := strings.Join(ws, " ")
	for b.Loop() {
		signature(shingles(text))
	}
}
