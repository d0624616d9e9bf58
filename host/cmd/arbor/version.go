package main

import "runtime/debug"

// installedVersion is the module version of a CLI built by `go install
// github.com/arbormem/arbor/host/cmd/arbor@vX.Y.Z` (docs/release.md), or ""
// for any other build.
func installedVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return moduleVersion(info.Main)
}

// moduleVersion returns main's version when it came from a module download,
// which the go command records with the download's checksum. A build inside
// a clone has no checksum: its version is "(devel)" or, with VCS stamping, a
// pseudo-version of whichever tag is an ancestor, and release tags never are
// (they sit beside main, docs/release.md), so it would name an older release
// than the one being built; api.Version says the truth there.
func moduleVersion(main debug.Module) string {
	if main.Sum == "" {
		return ""
	}
	return main.Version
}
