package api

// Progress is how far a long call has got (docs/ABI.md §2.2): Done of
// Total units of one phase. Hosts show it (a progress bar, an event);
// nothing depends on it.
type Progress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"` // 0 when not known in advance
}

// Progress phases.
const (
	PhaseRead  = "read"  // files of the tree read: at open (Total 0), by tidy
	PhaseWrite = "write" // operations applied by curate or ingest
	PhaseIndex = "index" // documents indexed
	PhaseEmbed = "embed" // files embedded (docs/ABI.md §2.3)
	PhaseMerge = "merge" // documents of the index's segments merged when it is saved
)
