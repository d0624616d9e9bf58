package api

// StateDir is the engine's private folder at the memory root: the search
// index, lifecycle signals, audit log and ingest manifest. Its presence
// also marks a folder as a memory root for the CLI.
const StateDir = ".arbor"

// IgnoreFile and IgnoreRules keep git out of StateDir: what the engine
// keeps there is this machine's, derived from the tree or rebuilt, so a
// tree kept in git shares its entries and context files only. Opening a
// root writes the file when it is missing; `arbor init` writes it too.
const (
	IgnoreFile  = StateDir + "/.gitignore"
	IgnoreRules = "# Arbor's state on this machine (index, lifecycle signals, audit log): not shared.\n*\n"
)

// AuditFile is the audit log: one JSON line per curate operation, applied
// or failed, appended as soon as it is done (docs/format.md).
const AuditFile = StateDir + "/audit.jsonl"

// JournalFile holds the curate operation being applied, until its line
// is in the audit log: a process killed in between leaves it, and the
// next open or curate records what the operation did (docs/format.md).
const JournalFile = StateDir + "/journal.json"

// CatalogFile is the persisted catalog: per file of the tree, its stamp,
// size and modification time and what views of the whole tree read of it,
// so that an open reads only the files that changed (docs/format.md). A
// cache: a missing or damaged one is rebuilt from the tree.
const CatalogFile = StateDir + "/catalog.bin"

// CatalogDeltaFile holds what changed in the catalog since CatalogFile
// was written, so that a save writes what changed rather than the whole
// tree's records (docs/format.md). It names the CatalogFile it applies to:
// one that names another is ignored.
const CatalogDeltaFile = StateDir + "/catalog-delta.bin"

// TempPrefix starts the name of every temporary file of an atomic write,
// in every host: a dot-name, so the tree walk skips it, and one prefix, so
// `arbor doctor --fix` finds those a crash left behind.
const TempPrefix = ".arbor-tmp-"

// VectorsFile holds the embedding vectors of the tree's files, with the
// model and dimension they were made with, when the host has an embedding
// model (docs/format.md, docs/ABI.md §2.3). A cache: a missing, damaged or
// other model's file is rebuilt by embedding again.
const VectorsFile = StateDir + "/vectors.bin"
