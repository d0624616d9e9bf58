package api

// Preprocessing limits of "curateFrom" (docs/ABI.md §6.6; the ByteRover
// paper, §4.1.1 and Table 7).
const (
	MaxSourceFiles = 5
	MaxSourceChars = 40000
	MaxCodeLines   = 2000
	// CompactAbove is the material size (characters) from which it is
	// compacted before curation: past it, the material crowds out the
	// model's room to reason about operations.
	CompactAbove = 20000
)

// SourceFile is one file of raw material, for "curateFrom" and "ingest":
// a name (a relative path, which also selects the format) and its text.
type SourceFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// CurateFromParams are the parameters of "curateFrom".
type CurateFromParams struct {
	// Files are the material, 1 to MaxSourceFiles files of at most
	// MaxSourceChars characters each.
	Files []SourceFile `json:"files"`
	// Instruction tells the model what to focus on, optionally.
	Instruction string `json:"instruction,omitempty"`
	// TokenBudget bounds all the model calls; 0 is the open's
	// llm.curateTokenBudget.
	TokenBudget int `json:"tokenBudget,omitempty"`
	// MaxIterations bounds the model calls (1 to 50); 0 is the open's
	// llm.maxIterations.
	MaxIterations int `json:"maxIterations,omitempty"`
}

// SourceNote says how a file was taken in.
type SourceNote struct {
	Name  string `json:"name"`
	Chars int    `json:"chars"`
	// DroppedLines counts the lines of a code file cut at MaxCodeLines.
	DroppedLines int `json:"droppedLines,omitempty"`
}

// Compaction says how the material was reduced before curation.
type Compaction struct {
	InputChars  int `json:"inputChars"`
	OutputChars int `json:"outputChars"`
	// Pass is the pass whose output was used: 1 (summary), 2 (aggressive
	// summary) or 3 (deterministic truncation).
	Pass int `json:"pass"`
	// Notes say why each earlier pass was not used.
	Notes []string `json:"notes,omitempty"`
}

// Attempt is one operation the model proposed, as applied to the staged
// tree during the loop, with the turn (model call) that proposed it.
type Attempt struct {
	Turn int `json:"turn"`
	Applied
	// Refused: the engine refused the operation before applying it (it
	// copied the prompt's example).
	Refused bool `json:"refused,omitempty"`
}

// CurateFromResult is the answer of "curateFrom".
type CurateFromResult struct {
	// Applied and Summary are what was written to the tree: the
	// operations that succeeded in the loop, applied again through the
	// curate path when the loop ended.
	Applied []Applied `json:"applied"`
	Summary Summary   `json:"summary"`
	// Attempts are every operation the model proposed, failures included.
	Attempts   []Attempt    `json:"attempts"`
	Files      []SourceNote `json:"files"`
	Compaction *Compaction  `json:"compaction,omitempty"`
	// Message is the model's closing words.
	Message string   `json:"message,omitempty"`
	Reason  string   `json:"reason"`
	LLM     LLMTrace `json:"llm"`
	TookMs  float64  `json:"tookMs"`
}
