package measure

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
)

// Percentile is the p-th percentile of xs by nearest rank, 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.9999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// StartCPUProfile starts a CPU profile into file, or does nothing when
// file is empty. The n-th profile of a run (from 1) goes to file, then
// file.2, file.3 and so on; stop ends it.
func StartCPUProfile(file string, n int) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	if n > 1 {
		file = fmt.Sprintf("%s.%d", file, n)
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
