package portmath

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// inputs are the arguments the tests try: what ranking passes (idf
// ratios, day counts over τ, decays) and random values over each
// function's domain.
func inputs() (exps, logs []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		exps = append(exps, -r.Float64()*50, (r.Float64()-0.5)*1400, -float64(i)/30)
		logs = append(logs, 1+float64(r.Float64()*1e4), // no FMA here either
			r.Float64(), math.Ldexp(r.Float64(), r.IntN(2000)-1000))
	}
	for N := 1; N < 3000; N += 7 {
		for n := 1; n <= N; n += 5 {
			logs = append(logs, 1+(float64(N)-float64(n)+0.5)/(float64(n)+0.5))
		}
	}
	return exps, logs
}

// digest hashes the bits of f over xs.
func digest(f func(float64) float64, xs []float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		v := math.Float64bits(f(x))
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// The digests of Go's math.Exp, math.Log and math.Pow(0.995, ·) over
// inputs as GOARCH=wasm computes them (go1.26; the test run under wazero
// checks them against math itself). Every architecture must give these.
const (
	wasmExp = 0x26dbeb55fc6cca66
	wasmLog = 0xde476ebdff4f075c
	wasmPow = 0x3f51b4c7ff24d43
)

func powDecay(d float64) float64 { return Pow(0.995, d) }

func TestBitsAsWasm(t *testing.T) {
	exps, logs := inputs()
	days := make([]float64, 0, 4000)
	for i := range 4000 {
		days = append(days, float64(i)/7)
	}
	if runtime.GOARCH == "wasm" {
		// Here math is Go's portable code, never fused: Exp and Log must
		// be bit for bit the same.
		for _, x := range exps {
			if a, b := Exp(x), math.Exp(x); math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("Exp(%v) = %v, math.Exp %v", x, a, b)
			}
		}
		for _, x := range logs {
			if a, b := Log(x), math.Log(x); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("Log(%v) = %v, math.Log %v", x, a, b)
			}
		}
	}
	for _, c := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"Exp", digest(Exp, exps), wasmExp},
		{"Log", digest(Log, logs), wasmLog},
		{"Pow", digest(powDecay, days), wasmPow},
	} {
		if c.got != c.want {
			t.Errorf("%s on %s: digest %#x, want %#x (wasm's)", c.name, runtime.GOARCH, c.got, c.want)
		}
	}
}

// ulps is the distance between a and b in units in the last place.
func ulps(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// TestAccuracy checks Exp and Log against this machine's math, which may
// round differently (amd64's assembly Exp is off by up to 2 ulps).
func TestAccuracy(t *testing.T) {
	exps, logs := inputs()
	for _, x := range exps {
		if d := ulps(Exp(x), math.Exp(x)); d > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v: %d ulps apart", x, Exp(x), math.Exp(x), d)
		}
	}
	for _, x := range logs {
		if d := ulps(Log(x), math.Log(x)); d > 1 {
			t.Fatalf("Log(%v) = %v, math.Log %v: %d ulps apart", x, Log(x), math.Log(x), d)
		}
	}
	for d := 0.0; d < 4000; d += 0.5 {
		if got, want := Pow(0.995, d), math.Pow(0.995, d); math.Abs(got-want) > 1e-13*want {
			t.Fatalf("Pow(0.995, %v) = %v, math.Pow %v", d, got, want)
		}
	}
}

func TestSpecialCases(t *testing.T) {
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, math.Copysign(0, -1), 1e-300, 709.8, -745.2, 1e-9, -1e-9} {
		if a, b := Exp(x), math.Exp(x); a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
			t.Errorf("Exp(%v) = %v, want %v", x, a, b)
		}
	}
	// amd64's assembly math.Log gives -709.09 for the smallest subnormal.
	for _, c := range [][2]float64{{math.Inf(1), math.Inf(1)}, {math.NaN(), math.NaN()}, {0, math.Inf(-1)}, {-1, math.NaN()}, {1, 0}, {math.E, 1},
		{math.SmallestNonzeroFloat64, -744.4400719213812}, {math.MaxFloat64, 709.782712893384}} {
		if got := Log(c[0]); got != c[1] && !(math.IsNaN(got) && math.IsNaN(c[1])) {
			t.Errorf("Log(%v) = %v, want %v", c[0], got, c[1])
		}
	}
}
