package api

import "time"

// SignalsParams are the parameters of "signals" (docs/ABI.md §4.18), which
// keeps the lifecycle signals of several engines open on one root in
// step: a host that answers reads from read-only engines hands the
// accesses they counted to the one engine that writes, and the signals that
// engine changed back to the readers.
type SignalsParams struct {
	// Accessed counts this many accesses of each entry, as read and query
	// count theirs; a path that names no entry is skipped.
	Accessed map[string]int `json:"accessed,omitempty"`
	// Set takes these signals as the entries' own (another engine's), a
	// null one dropping what the engine holds for the path; nothing is
	// counted.
	Set map[string]*Signal `json:"set,omitempty"`
}

// SignalsResult is what an engine counted and changed since its previous
// "signals" call, which the call forgets: Accessed, the accesses its own
// reads counted (not those given in Accessed), and Changed, the signals
// that changed, by any cause but Set (null: dropped).
type SignalsResult struct {
	Accessed map[string]int     `json:"accessed"`
	Changed  map[string]*Signal `json:"changed"`
}

// Signal is one entry's lifecycle signal as recorded (in
// .arbor/state.json, docs/ABI.md §4.8): importance and maturity as of
// LastActivity.
type Signal struct {
	Importance   float64   `json:"importance"`
	Maturity     Maturity  `json:"maturity"`
	Accesses     int       `json:"accesses"`
	Updates      int       `json:"updates"`
	LastActivity time.Time `json:"lastActivity"`
}
