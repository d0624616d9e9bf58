// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in Go's LICENSE file
// (https://go.dev/LICENSE).

// Package portmath holds the few floating-point functions ranking needs
// whose results must be the same bits on every architecture, so that a
// ranking is identical natively (amd64, arm64) and in WebAssembly.
//
// Go's math package does not promise that: math.Exp and math.Log run
// assembly on amd64 (Exp uses FMA instructions where the CPU has them), and
// the Go specification lets the compiler fuse x*y + z into one FMA, which
// it does on arm64, ppc64le, s390x, riscv64 and amd64 with GOAMD64=v3.
// Natively on amd64, math.Exp differs from the same call in wasm in the
// last bit for about one input in three (TestExpBits).
//
// Exp and Log are Go's portable implementations (math/exp.go, math/log.go,
// the ones wasm runs), with every product that is added to something
// converted explicitly to float64: such a conversion rounds, and the
// specification forbids fusing across it. Their results are therefore
// exactly what GOARCH=wasm computes, everywhere.
package portmath

import "math"

// Exp returns e**x, as math.Exp (the same special cases), with the same
// bits on every architecture.
func Exp(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01
		Ln2Lo = 1.90821492927058770002e-10
		Log2e = 1.44269504088896338700e+00

		Overflow  = 7.09782712893383973096e+02
		Underflow = -7.45133219101941108420e+02
		NearZero  = 1.0 / (1 << 28) // 2**-28
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > Overflow: // handles case where x is +∞
		return math.Inf(1)
	case x < Underflow: // handles case where x is -∞
		return 0
	case -NearZero < x && x < NearZero:
		return 1 + x
	}
	// reduce; computed as r = hi - lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(float64(Log2e*x) - 0.5)
	case x > 0:
		k = int(float64(Log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*Ln2Hi)
	lo := float64(float64(k) * Ln2Lo)
	return expmulti(hi, lo, k)
}

// expmulti returns e**r × 2**k where r = hi - lo and |r| ≤ ln(2)/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		P1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		P2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		P3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		P4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		P5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)
	r := hi - lo
	t := float64(r * r)
	p := P4 + float64(t*P5)
	p = P3 + float64(t*p)
	p = P2 + float64(t*p)
	p = P1 + float64(t*p)
	c := r - float64(t*p)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x, as math.Log (the same special
// cases), with the same bits on every architecture.
func Log(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		Ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		L1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		L2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		L3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		L4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		L5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		L6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		L7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// reduce
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	// compute
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := L5 + float64(s4*L7)
	t1 = L3 + float64(s4*t1)
	t1 = float64(s2 * (L1 + float64(s4*t1)))
	t2 := L4 + float64(s4*L6)
	t2 = float64(s4 * (L2 + float64(s4*t2)))
	R := t1 + t2
	hfsq := float64(0.5 * f * f)
	return float64(k*Ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*Ln2Lo))) - f)
}

// Pow returns x**y for x > 0 as e**(y·ln x), with the same bits on every
// architecture (math.Pow calls math.Exp and math.Log). It is within a few
// units in the last place of math.Pow for the exponents ranking uses
// (days, below a few thousand).
func Pow(x, y float64) float64 {
	return Exp(float64(y * Log(x)))
}
