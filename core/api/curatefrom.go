package api

import "strings"

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
// a name (a relative path, which also selects the format) and either its
// text (Content) or its bytes as read from disk (Data, base64 in JSON),
// whose encoding the engine detects (DecodeText).
type SourceFile struct {
	Name    string `json:"name"`
	Content string `json:"content,omitempty"`
	Data    []byte `json:"data,omitempty"`
}

// Text returns the file's text: Content, which must be UTF-8 without NUL
// bytes, or Data decoded by DecodeText. A file with both is refused. The
// error wraps ErrBadInput and says where and why.
func (f SourceFile) Text() (string, error) {
	if f.Data != nil {
		if f.Content != "" {
			return "", badInput("both content and data: send the text or the bytes, not both")
		}
		return DecodeText(f.Data)
	}
	if i := invalidUTF8(f.Content); i >= 0 {
		return "", badInput("not valid UTF-8 text (at byte %d, line %d): send the file's bytes as data to have their encoding detected", i, strings.Count(f.Content[:i], "\n")+1)
	}
	if strings.IndexByte(f.Content, 0) >= 0 {
		return "", badInput("holds NUL bytes: a binary file, not text")
	}
	return f.Content, nil
}

// size is the size of the file as sent: its bytes, or its text's.
func (f SourceFile) size() int {
	if f.Data != nil {
		return len(f.Data)
	}
	return len(f.Content)
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
