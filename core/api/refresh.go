package api

// RefreshParams are the parameters of "refresh" (docs/ABI.md §4.12): the
// paths a host saw change (files or folders, relative to the root), or
// none for a scan of the whole tree.
type RefreshParams struct {
	Paths []string `json:"paths,omitempty"`
}

// RefreshResult says what "refresh" found: files read again because
// their listing changed (Checked), and of those the ones the engine now
// holds anew (Added), differently (Updated) or no more (Removed).
type RefreshResult struct {
	Scanned bool `json:"scanned"` // the whole tree was listed
	Checked int  `json:"checked"`
	Added   int  `json:"added"`
	Updated int  `json:"updated"`
	Removed int  `json:"removed"`
	// Paths are the files added, updated and removed, sorted: what a host
	// announces as changed when it could not watch (a scan after the
	// watcher lost events). Absent when none.
	Paths  []string `json:"paths,omitempty"`
	TookMs float64  `json:"tookMs"`
}
