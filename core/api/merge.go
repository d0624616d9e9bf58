package api

// MergeParams are the parameters of "merge" (docs/ABI.md §4.15): the files
// that differ between a common ancestor and two versions of a tree (a git
// merge base, the local commit and the fetched one), and the names the
// conflict blocks give the two sides.
type MergeParams struct {
	Files []MergeFile `json:"files"`
	// Ours and Theirs label the sides in conflict blocks and messages
	// ("local", "origin/main 1a2b3c4"); "ours" and "theirs" when empty.
	Ours   string `json:"ours,omitempty"`
	Theirs string `json:"theirs,omitempty"`
	// Taken are paths of files either tree holds besides Files: a
	// conflict copy is never named after one, so that it does not
	// replace an earlier copy a person has not resolved yet. Hosts pass
	// those whose name holds ".conflict", the only ones a copy can take.
	Taken []string `json:"taken,omitempty"`
}

// MergeFile is one path in the three versions; a nil version is a file
// absent from that version. On the wire each is base64 (JSON's form of
// bytes), so that any file of a repository, text or not, goes through.
type MergeFile struct {
	Path   string  `json:"path"`
	Base   *[]byte `json:"base,omitempty"`
	Ours   *[]byte `json:"ours,omitempty"`
	Theirs *[]byte `json:"theirs,omitempty"`
}

// Merge statuses (MergedFile.Status).
const (
	MergeOurs        = "ours"        // the result is ours: theirs did not change it, or changed it alike
	MergeTheirs      = "theirs"      // the result is theirs: only theirs changed it
	MergeMerged      = "merged"      // both changed it; the changes merged cleanly
	MergeConflict    = "conflict"    // both changed it differently: both versions kept, in a conflict block or a conflict copy
	MergeKept        = "kept"        // one side deleted it, the other changed it: the change is kept
	MergeDeleted     = "deleted"     // the result has no file here
	MergeMoved       = "moved"       // a move on one side met a change on the other: the change follows the move (From)
	MergeRegenerated = "regenerated" // a context.md put back for a folder the merge keeps entries in
	MergeCopy        = "copy"        // theirs of a file that cannot hold both versions (not an entry), kept beside it
)

// MergeResult is the merged version of every path given, and of the paths
// the merge adds (regenerated context.md files, conflict copies).
type MergeResult struct {
	Files []MergedFile `json:"files"`
	// Conflicts counts the files whose status is MergeConflict.
	Conflicts int `json:"conflicts"`
}

// MergedFile is one path of the merge's result. Content is nil when the
// result has no file at Path.
type MergedFile struct {
	Path    string  `json:"path"`
	Content *[]byte `json:"content,omitempty"`
	Status  string  `json:"status"`
	Message string  `json:"message,omitempty"`
	// Conflicts name the parts both sides changed differently
	// ("summary", "narrative.rules", "facts"); the conflict block holds both.
	Conflicts []string `json:"conflicts,omitempty"`
	// From is the path a moved entry had in the base (MergeMoved).
	From string `json:"from,omitempty"`
}
