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
