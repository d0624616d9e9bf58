package api

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// DefaultMaxSourceBytes bounds a source file of "ingest" when
// IngestOptions.MaxSourceBytes is 0.
const DefaultMaxSourceBytes = 8 << 20

// ErrBadInput is wrapped by every error about a source's content
// (encoding, size, syntax): the file is refused as a whole and nothing is
// written.
var ErrBadInput = errors.New("bad input")

// IngestOptions tune how "ingest" splits and places files.
type IngestOptions struct {
	// Domain, when set, is the domain every entry goes under instead of the
	// one derived from the file's kind (a snake_case folder name).
	Domain string `json:"domain,omitempty"`
	// ContextTurns is how many preceding turns of the session a per-turn
	// chat entry carries in its flow; nil means 2, 0 none.
	ContextTurns *int `json:"contextTurns,omitempty"`
	// MaxSourceBytes bounds a source file; 0 means DefaultMaxSourceBytes.
	MaxSourceBytes int `json:"maxSourceBytes,omitempty"`
}

// IngestParams are the parameters of "ingest" (docs/ABI.md §4.11): the
// files, the sources to prune, and the options that shape their entries.
type IngestParams struct {
	Files []SourceFile `json:"files"`
	// Prune lists source-name prefixes ("notes/"; "" is every source): a
	// source under one of them that is neither in Files nor in Keep is
	// removed, its entries deleted.
	Prune []string `json:"prune,omitempty"`
	// Keep names sources that still exist though this call does not send
	// them (a host that sends a folder in several calls prunes with the
	// last one and lists the others here).
	Keep []string `json:"keep,omitempty"`
	// PruneEmpty lets a Prune prefix under which the call sends no file
	// and keeps none remove every source under it. Without it such a prefix
	// removes nothing and the result warns (IngestEmptyPrune): an empty
	// folder is more often a share not mounted or a sync not yet done than
	// a folder a person emptied.
	PruneEmpty bool `json:"pruneEmpty,omitempty"`
	// Origins says where the files under each source-name prefix come from
	// ("notes/" → the folder's real path): an opaque string the engine only
	// compares. The manifest records a prefix's origin the first time; a
	// call giving another origin for it fails its files under it and
	// refuses its prunes that reach it (IngestOtherOrigin), so that two
	// folders of one name do not overwrite each other's entries.
	Origins map[string]string `json:"origins,omitempty"`
	// Relocated says the folders moved on disk: the call's Origins replace
	// those recorded for their prefixes (and for prefixes above or below
	// them) instead of clashing with them.
	Relocated bool `json:"relocated,omitempty"`
	IngestOptions
}

// AgentOrigin is the origin (IngestParams.Origins) a host gives the top
// folders of documents an agent sends (the MCP server's arbor-ingest): they
// come from no folder of the machine and are often the only copy of their
// text. No folder moved there, so a relocated call never replaces it: a
// folder's prune would then delete the agent's documents.
const AgentOrigin = "arbor-ingest (an agent's documents)"

// Statuses of an IngestFile.
const (
	IngestAdded     = "added"     // a source seen for the first time
	IngestUpdated   = "updated"   // a changed source
	IngestUnchanged = "unchanged" // nothing to do
	IngestRemoved   = "removed"   // a source pruned: its entries deleted, its record dropped
	IngestFailed    = "failed"
)

// IngestFile is what ingesting one file did.
type IngestFile struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	// Status is IngestAdded (a new source), IngestUpdated,
	// IngestUnchanged, IngestRemoved (a pruned source) or IngestFailed.
	Status string `json:"status"`
	// Message says why a file failed (bad input, failed operations).
	Message string `json:"message,omitempty"`
	// Warnings say what of the file was read otherwise than written (a
	// note's front matter that does not parse, kept in its text).
	Warnings []string `json:"warnings,omitempty"`
	// Entries counts the entries the file makes (0 for a removed source).
	Entries   int `json:"entries"`
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	// Applied has one item per operation, as curate reports it.
	Applied []Applied `json:"applied"`
}

// IngestSummary adds up the files of an ingest call: Files counts the items
// of IngestResult.Files (the call's files and the removed sources),
// FailedFiles and Removed those of them that failed or were removed.
type IngestSummary struct {
	Files       int `json:"files"`
	FailedFiles int `json:"failedFiles"`
	// Removed is omitted when 0, so that results without a prune read as
	// they always have.
	Removed   int `json:"removed,omitempty"`
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
}

// IngestResult is the answer of "ingest".
type IngestResult struct {
	Files   []IngestFile  `json:"files"`
	Summary IngestSummary `json:"summary"`
	// Warnings say what the call asked and the engine left undone without
	// a file failing for it (a prune left alone); omitted when none.
	Warnings []IngestWarning `json:"warnings,omitempty"`
	TookMs   float64         `json:"tookMs"`
}

// Codes of an IngestWarning.
const (
	// IngestEmptyPrune: a prune prefix the call sends and keeps no source
	// under removed nothing, since PruneEmpty was not set.
	IngestEmptyPrune = "empty_prune"
	// IngestOtherOrigin: a prefix whose origin differs from the one the
	// manifest records: its files failed, its prune was refused.
	IngestOtherOrigin = "other_origin"
)

// IngestWarning is one thing an ingest call left undone, by prefix.
type IngestWarning struct {
	Code   string `json:"code"`
	Prefix string `json:"prefix"`
	// Origin is, for IngestOtherOrigin, the origin the manifest records.
	Origin string `json:"origin,omitempty"`
	// Sources counts the sources recorded under Prefix that the call left
	// as they are.
	Sources int    `json:"sources"`
	Message string `json:"message"`
}

// Format names how a file is split.
type Format string

// The formats, as results and the manifest name them.
const (
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
	FormatJSON     Format = "json"
	FormatJSONL    Format = "jsonl"
	FormatCSV      Format = "csv"
	FormatTSV      Format = "tsv"
	FormatEmail    Format = "email"
	FormatCalendar Format = "calendar"
	FormatGo       Format = "go"
	FormatJS       Format = "javascript"
	FormatPython   Format = "python"
	FormatChat     Format = "chat"
)

// FormatOf returns the format a file name selects by its extension; names
// with another extension are plain text. JSON and JSONL files holding chat
// transcripts are recognized by their content ("ingest" reports
// FormatChat).
func FormatOf(name string) Format {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown", ".mkd":
		return FormatMarkdown
	case ".json":
		return FormatJSON
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".csv":
		return FormatCSV
	case ".tsv", ".tab":
		return FormatTSV
	case ".eml":
		return FormatEmail
	case ".ics", ".ical", ".ifb":
		return FormatCalendar
	case ".go":
		return FormatGo
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return FormatJS
	case ".py", ".pyi":
		return FormatPython
	}
	return FormatText
}

// SourceText applies the rules every source of "ingest" must meet before
// it is split and returns its text: a valid name (CleanPath), at most
// maxBytes bytes as sent (0 means DefaultMaxSourceBytes), and text (see
// SourceFile.Text). The error wraps ErrBadInput and says where and why.
func SourceText(f SourceFile, maxBytes int) (string, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSourceBytes
	}
	if _, err := CleanPath(f.Name); err != nil {
		return "", fmt.Errorf("%w: name: %v", ErrBadInput, err)
	}
	if n := f.size(); n > maxBytes {
		return "", badInput("%d bytes is over the %d-byte limit", n, maxBytes)
	}
	return f.Text()
}

// CheckPrefix reports whether prefix can be a prune prefix of
// IngestParams: "" (every source) or a valid path.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	_, err := CleanPath(prefix)
	return err
}

func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, args...))
}

// invalidUTF8 returns the offset of the first invalid UTF-8 byte, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return i
			}
		}
	}
	return -1
}
