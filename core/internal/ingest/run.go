package ingest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	man, before, err := loadManifest(fsys, log)
	if err != nil {
		return api.IngestResult{}, err
	}
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
	if len(p.Prune) > 0 {
		keep := maps.Clone(seen)
		for _, name := range p.Keep {
			keep[name] = true
		}
		for _, fp := range pl.Prune(p.Prune, keep) {
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
