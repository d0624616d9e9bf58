package ingest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
)

// manifestBackupPath keeps an unreadable manifest for inspection.
const manifestBackupPath = ".arbor/ingest.corrupt.json"

// Run is the "ingest" method (docs/ABI.md §4.11) over the tree of cat,
// read and written through fsys: it splits files into entries and applies
// them through apply (the engine's curate path) as one batch. Every file is
// split and planned first (a file that cannot be split fails alone, before
// anything is written), then the removal of the pruned sources, then all
// operations go through one apply, then the manifest is written. An
// unchanged file costs no write at all.
func Run(fsys host.FS, log host.Logger, cat *catalog.Catalog, apply func([]api.Operation) curate.Result, p api.IngestParams) (api.IngestResult, error) {
	start := time.Now()
	if p.ContextTurns != nil && *p.ContextTurns < 0 {
		return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "contextTurns %d: want 0 or more", *p.ContextTurns)
	}
	if p.MaxSourceBytes < 0 {
		return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "maxSourceBytes %d: want 0 (the default) or more", p.MaxSourceBytes)
	}
	for _, pre := range p.Prune {
		if err := api.CheckPrefix(pre); err != nil {
			return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "prune: %v", err)
		}
	}
	for _, pre := range slices.Sorted(maps.Keys(p.Origins)) {
		switch err := api.CheckPrefix(pre); {
		case pre == "":
			return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "origins: the prefix \"\": want a source-name prefix such as \"notes/\"")
		case err != nil:
			return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "origins: %v", err)
		case p.Origins[pre] == "":
			return api.IngestResult{}, api.Errorf(api.CodeInvalidParams, "origins: %q: an empty origin", pre)
		}
	}
	man, before, err := loadManifest(fsys, log)
	if err != nil {
		return api.IngestResult{}, err
	}
	if p.Relocated {
		relocate(man, p.Origins)
	}
	clash := clashes(man, p.Origins)
	spell := &curate.Curator{FS: fsys, Catalog: cat}
	pl := &Planner{Manifest: man, Catalog: cat, Options: p.IngestOptions, Spell: spell.Spell, Read: fsys.ReadFile}
	res := api.IngestResult{Files: make([]api.IngestFile, len(p.Files))}
	plans := make([]FilePlan, len(p.Files))
	var ops []api.Operation
	seen := map[string]bool{}
	for i, f := range p.Files {
		r := &res.Files[i]
		r.Name, r.Applied = f.Name, []api.Applied{}
		if seen[f.Name] {
			r.Status, r.Format = api.IngestFailed, string(api.FormatOf(f.Name))
			r.Message = "listed twice in one call"
			continue
		}
		seen[f.Name] = true
		if pre, ok := clashOf(clash, f.Name); ok {
			r.Status, r.Format = api.IngestFailed, string(api.FormatOf(f.Name))
			r.Message = clash[pre].message(pre)
			continue
		}
		fp, err := pl.Plan(f)
		r.Format = string(fp.Format)
		if err != nil {
			r.Status, r.Message = api.IngestFailed, err.Error()
			continue
		}
		plans[i] = fp
	}
	pl.Link(plans)
	pl.Follow(plans, seen)
	for i, fp := range plans {
		r := &res.Files[i]
		if r.Status == api.IngestFailed {
			continue
		}
		r.Status, r.Entries, r.Unchanged = fp.Status, fp.Pieces, fp.Unchanged
		r.Warnings = append(slices.Clone(fp.Warnings), fp.Kept...)
		if len(fp.Follow) > 0 && r.Status == api.IngestUnchanged {
			r.Status = api.IngestUpdated
		}
		ops = append(ops, fp.Ops...)
		ops = append(ops, fp.Follow...)
	}
	res.Warnings = clashWarnings(man, clash, p)
	if len(p.Prune) > 0 {
		keep := maps.Clone(seen)
		for _, name := range p.Keep {
			keep[name] = true
		}
		prune, empty := prunable(p, clash)
		removed := pl.Prune(prune, keep)
		res.Warnings = append(res.Warnings, emptyWarnings(pl, empty, keep, removed)...)
		for _, fp := range removed {
			res.Files = append(res.Files, api.IngestFile{Name: fp.Name, Format: string(fp.Format), Status: fp.Status, Applied: []api.Applied{}, Warnings: fp.Kept})
			plans = append(plans, fp)
			ops = append(ops, fp.Ops...)
		}
	}
	applied := apply(ops).Applied
	at := 0
	for i := range res.Files {
		r, fp := &res.Files[i], plans[i]
		if r.Status == api.IngestFailed {
			res.Summary.FailedFiles++
			continue
		}
		// The file's own operations, then the UPDATEs that link notes
		// ingested before to it (Planner.Follow).
		n := len(fp.Ops)
		mine := applied[at : at+n+len(fp.Follow)]
		at += len(mine)
		for _, a := range mine {
			r.Applied = append(r.Applied, a.Applied)
		}
		for j, a := range mine {
			switch {
			case a.Status != api.StatusSuccess:
				r.Failed++
			case j < n && fp.Ops[j].Type == api.OpDelete:
				r.Deleted++
			case a.Created:
				r.Added++
			default:
				r.Updated++
			}
		}
		switch {
		case pl.Record(fp, mine[:n])+pl.RecordFollow(fp, mine[n:]) == 0:
			if r.Status == api.IngestRemoved {
				res.Summary.Removed++
			}
		case r.Status == api.IngestRemoved:
			r.Status = api.IngestFailed
			r.Message = fmt.Sprintf("%d of %d deletions failed; the source stays recorded and the next prune retries them", r.Failed, len(mine))
			res.Summary.FailedFiles++
		default:
			r.Status = api.IngestFailed
			r.Message = fmt.Sprintf("%d of %d operations failed; the entries written are recorded and the next ingest retries the rest", r.Failed, len(mine))
			res.Summary.FailedFiles++
		}
		res.Summary.Added += r.Added
		res.Summary.Updated += r.Updated
		res.Summary.Deleted += r.Deleted
		res.Summary.Unchanged += r.Unchanged
		res.Summary.Failed += r.Failed
	}
	res.Summary.Files = len(res.Files)
	recordOrigins(man, p.Origins, clash)
	if data := man.Encode(); string(data) != string(before) {
		if err := fsys.WriteFile(ManifestPath, data); err != nil {
			// The entries are written; their provenance lets the next ingest
			// find them without the manifest (it rewrites them once).
			log.Log("warn", fmt.Sprintf("ingest: write %s: %v", ManifestPath, err))
		}
	}
	res.TookMs = api.TookMs(start)
	return res, nil
}

// loadManifest reads the ingest manifest. A missing one is empty; an
// unreadable one is kept as ingest.corrupt.json and replaced, since the
// entries' provenance recovers what it held.
func loadManifest(fsys host.FS, log host.Logger) (*Manifest, []byte, error) {
	data, err := fsys.ReadFile(ManifestPath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return NewManifest(), nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("ingest: read %s: %w", ManifestPath, err)
	}
	m, perr := ParseManifest(data)
	if perr != nil {
		log.Log("warn", fmt.Sprintf("ingest: %v; kept as %s, entries are found by their provenance", perr, manifestBackupPath))
		if err := fsys.WriteFile(manifestBackupPath, data); err != nil {
			return nil, nil, fmt.Errorf("ingest: keep unreadable %s: %w", ManifestPath, err)
		}
		return NewManifest(), data, nil
	}
	return m, data, nil
}

// clash is a prefix of a call whose origin differs from the one the
// manifest records for it, or for a prefix above or below it.
type clash struct {
	prefix, recorded, given string // the recorded prefix and its origin; the call's origin
}

// message is what a file under pre (a prefix of the call) fails with.
func (c clash) message(pre string) string {
	if c.recorded == api.AgentOrigin {
		return fmt.Sprintf("%q holds documents an agent sent (%s), which no folder holds, and this call's %q come from %s: two origins under one name would overwrite and prune each other's entries; send these under another name",
			c.prefix, c.recorded, pre, c.given)
	}
	return fmt.Sprintf("%q holds the files of %s, and this call's %q come from %s: two origins under one name would overwrite and prune each other's entries; send these under another name, or, if %s moved to %s, send them again as relocated (the CLI's --moved)",
		c.prefix, c.recorded, pre, c.given, c.recorded, c.given)
}

// relocate forgets the origins the manifest records for the prefixes of
// origins and for those above or below them: the call says its folders
// moved, and recordOrigins records where they are now. An agent's
// documents moved from no folder: their origin stays, and clashes.
func relocate(man *Manifest, origins map[string]string) {
	for at := range man.Origins {
		for pre := range origins {
			if overlap(pre, at) && man.Origins[at] != api.AgentOrigin {
				delete(man.Origins, at)
				break
			}
		}
	}
}

// clashes finds the prefixes of origins whose origin differs from the one
// the manifest records for the same prefix, or for one above or below it
// (a prune of the outer prefix would reach the inner one's sources).
func clashes(man *Manifest, origins map[string]string) map[string]clash {
	out := map[string]clash{}
	for _, pre := range slices.Sorted(maps.Keys(origins)) {
		for _, at := range slices.Sorted(maps.Keys(man.Origins)) {
			if overlap(pre, at) && man.Origins[at] != origins[pre] {
				out[pre] = clash{prefix: at, recorded: man.Origins[at], given: origins[pre]}
				break
			}
		}
	}
	return out
}

// clashOf returns the prefix of clash that name is under.
func clashOf(clash map[string]clash, name string) (string, bool) {
	for _, pre := range slices.Sorted(maps.Keys(clash)) {
		if strings.HasPrefix(name, pre) {
			return pre, true
		}
	}
	return "", false
}

// overlap reports whether one prefix is under the other.
func overlap(a, b string) bool {
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// under counts the sources the manifest records under prefix.
func under(man *Manifest, prefix string) int {
	return countUnder(slices.Collect(maps.Keys(man.Sources)), prefix)
}

// clashWarnings says, per prefix of another origin, what was left undone:
// its files failed, its prune refused.
func clashWarnings(man *Manifest, clash map[string]clash, p api.IngestParams) []api.IngestWarning {
	var out []api.IngestWarning
	for _, pre := range slices.Sorted(maps.Keys(clash)) {
		c := clash[pre]
		var undone []string
		if n := countUnder(sentNames(p.Files), pre); n > 0 {
			undone = append(undone, plural(n, "file", "files")+" failed")
		}
		if slices.ContainsFunc(p.Prune, func(q string) bool { return overlap(q, pre) }) {
			undone = append(undone, "the prune was refused")
		}
		if len(undone) == 0 {
			continue
		}
		out = append(out, api.IngestWarning{Code: api.IngestOtherOrigin, Prefix: pre, Origin: c.recorded, Sources: under(man, c.prefix),
			Message: fmt.Sprintf("%s: %s", strings.Join(undone, ", "), c.message(pre))})
	}
	return out
}

// prunable splits the prune prefixes of p: those to prune, and those left
// alone for being empty (the call sends and keeps no source under them,
// and p.PruneEmpty is not set). A prefix reaching one of another origin
// is neither.
func prunable(p api.IngestParams, clash map[string]clash) (prune, empty []string) {
	sent := sentNames(p.Files)
	for _, pre := range p.Prune {
		switch {
		case slices.ContainsFunc(slices.Collect(maps.Keys(clash)), func(c string) bool { return overlap(c, pre) }):
		case p.PruneEmpty || countUnder(sent, pre) > 0 || countUnder(p.Keep, pre) > 0:
			prune = append(prune, pre)
		default:
			empty = append(empty, pre)
		}
	}
	return prune, empty
}

// sentNames are the names of files.
func sentNames(files []api.SourceFile) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}

// countUnder counts the names under prefix.
func countUnder(names []string, prefix string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

// emptyWarnings says, per empty prefix, how many sources it would have
// removed beyond those the other prefixes remove.
func emptyWarnings(pl *Planner, empty []string, keep map[string]bool, removed []FilePlan) []api.IngestWarning {
	gone := map[string]bool{}
	for _, fp := range removed {
		gone[fp.Name] = true
	}
	var out []api.IngestWarning
	for _, pre := range empty {
		n := 0
		for _, fp := range pl.Prune([]string{pre}, keep) {
			if !gone[fp.Name] {
				n++
			}
		}
		if n == 0 {
			continue
		}
		out = append(out, api.IngestWarning{Code: api.IngestEmptyPrune, Prefix: pre, Sources: n,
			Message: fmt.Sprintf("prune %q: the call sends and keeps no source under it, so its %s stayed (an empty folder may be a share not mounted or a sync not done); to remove them, prune again with pruneEmpty",
				pre, plural(n, "source", "sources"))})
	}
	return out
}

// recordOrigins records the origins of the call for the prefixes that
// sources are recorded under, and forgets those no source is recorded
// under any more: a prefix pruned whole takes a new origin.
func recordOrigins(man *Manifest, origins map[string]string, clash map[string]clash) {
	for pre, o := range origins {
		if _, ok := clash[pre]; !ok && under(man, pre) > 0 {
			if man.Origins == nil {
				man.Origins = map[string]string{}
			}
			man.Origins[pre] = o
		}
	}
	for pre := range man.Origins {
		if under(man, pre) == 0 {
			delete(man.Origins, pre)
		}
	}
	if len(man.Origins) == 0 {
		man.Origins = nil
	}
}

// plural is "1 file" or "3 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
