package host

import "github.com/arbormem/arbor/core/api"

// ProgressLogger is a Logger that is also told how far long calls have
// got; an engine given one as its Logger reports to it.
type ProgressLogger interface {
	Logger
	Progress(api.Progress)
}

// Progress is reported only for work of at least minProgress units: a
// host draws no bar for a call that ends at once.
const minProgress = 200

// Reporter returns the reporter of one phase, a function told done of
// total units (0 when not known): it passes the first (done 0, which
// starts a new run), every percent and the last on to log when it takes
// progress (a ProgressLogger), and, in a run of unknown length, a report
// each time a thousand more units are done. It returns nil otherwise,
// which callers skip.
func Reporter(log Logger, phase string) func(done, total int) {
	pl, ok := log.(ProgressLogger)
	if !ok {
		return nil
	}
	last := 0
	return func(done, total int) {
		report := false
		switch {
		case total == 0:
			if done < last { // a new run
				last = 0
			}
			report = done-last >= 1000
		case total < minProgress:
		case done == 0, done == total, done-last >= max(total/100, 1):
			report = true
		}
		if report {
			last = done
			pl.Progress(api.Progress{Phase: phase, Done: done, Total: total})
		}
	}
}
