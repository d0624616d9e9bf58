package curate

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// valid is an operation that passed validation, its paths resolved.
type valid struct {
	// path is the entry path (ends in .md), or the folder for a folder DELETE.
	path string
	// folder reports that path is a folder (DELETE without a title).
	folder bool
	// named reports that the operation named the entry file itself (a path
	// ending in .md) rather than a folder and a title.
	named bool
	// title is the operation's title when it, not the path, names the entry.
	title string
	// given is path as the operation named it, before spell matched it
	// against the tree: a new entry's title, when none is given, comes from
	// the name as written ("Daily Plan.md"), not its snake_case form.
	given string
	// target is the MERGE target entry path, or where a MOVE puts path
	// (toFolder tells which MOVE destination it is).
	target string
	// toFolder reports that a MOVE's target is a folder, not an entry path.
	toFolder bool
	// relations are the content relations, cleaned.
	relations []string
	// base is the version of the entry the operation was made from
	// (api.Operation.Base), "" for none.
	base string
}

// validate checks an operation before anything is touched and resolves
// its paths: folder + title gives folder/EntryName(title).md, a path ending in
// .md is used as is.
func validate(typ string, op *api.Operation) (valid, error) {
	var v valid
	switch typ {
	case api.OpAdd, api.OpUpdate, api.OpUpsert, api.OpMerge, api.OpDelete, api.OpMove:
	default:
		return v, fmt.Errorf("unknown operation type %q: want ADD, UPDATE, UPSERT, MERGE, DELETE or MOVE", op.Type)
	}
	if field, ok := checkUTF8(op); !ok {
		return v, fmt.Errorf("invalid UTF-8 in %s", field)
	}
	if strings.TrimSpace(op.Reason) == "" {
		return v, errors.New("reason is required: say why this operation is made")
	}
	if strings.ContainsAny(op.Title, "\r\n") {
		return v, fmt.Errorf("title must be a single line: %q", op.Title)
	}
	v.base = strings.TrimSpace(op.Base)
	switch {
	case v.base != "" && typ == api.OpAdd:
		return v, errors.New("base is the version of an existing entry the operation was made from; an ADD writes a new one (use UPSERT or UPDATE)")
	case strings.TrimSpace(op.TargetBase) != "" && typ != api.OpMerge:
		return v, errors.New("targetBase is the version of a MERGE's mergeTarget; give base for the entry at path")
	}
	clean, err := api.CleanPath(strings.TrimSpace(op.Path))
	if err != nil {
		return v, err // a *api.PathError already names the path and the rule
	}
	title := strings.TrimSpace(op.Title)
	if path.Base(clean) == "context.md" {
		return v, fmt.Errorf("%s is a context file, kept by the engine: address an entry (a path ending in .md) or a folder and a title", clean)
	}
	switch {
	case tree.IsEntryPath(clean):
		v.path, v.named = clean, true
	case title != "":
		v.path, v.title = joinPath(clean, tree.EntryName(title)+".md"), title
	case typ == api.OpDelete, typ == api.OpMove:
		v.path, v.folder = clean, true
	case typ == api.OpMerge:
		// "domain/topic/name" without .md names the entry name.md.
		v.path, v.named = clean+".md", true
	default:
		return v, fmt.Errorf("title is required when path is a folder (%s)", clean)
	}
	if typ == api.OpMerge {
		mt := strings.TrimSpace(op.MergeTarget)
		if mt == "" {
			return v, errors.New("mergeTarget is required for MERGE: the entry the source is merged into")
		}
		t, err := api.CleanPath(mt)
		if err != nil {
			return v, fmt.Errorf("invalid mergeTarget %q: %w", op.MergeTarget, err)
		}
		if path.Base(t) == "context.md" {
			return v, fmt.Errorf("mergeTarget %s is a context file, not an entry", t)
		}
		if !tree.IsEntryPath(t) {
			t += ".md"
		}
		v.target = t
		if t == v.path {
			return v, fmt.Errorf("cannot merge %s into itself", t)
		}
	}
	if typ == api.OpMove {
		if err := validateMove(op, &v); err != nil {
			return v, err
		}
	}
	for _, r := range op.Content.Relations {
		cr, err := cleanRelation(r)
		if err != nil {
			return v, fmt.Errorf("invalid relation %q: %w", r, err)
		}
		if cr != "" {
			v.relations = appendRelations(v.relations, []string{cr})
		}
	}
	return v, nil
}

// validateMove checks what a MOVE names: where to, and nothing it would
// ignore (a MOVE carries an entry's bytes as they are, so content given
// with it would be silently lost).
func validateMove(op *api.Operation, v *valid) error {
	to := strings.TrimSpace(op.To)
	if to == "" {
		return errors.New("to is required for MOVE: the folder domain/topic[/subtopic] to move into, or the new entry path ending in .md")
	}
	if strings.TrimSpace(op.Summary) != "" || !reflect.ValueOf(op.Content).IsZero() || strings.TrimSpace(op.MergeTarget) != "" {
		return errors.New("MOVE moves an entry or a folder as it is: give path, to and reason only (UPDATE it to change what it says)")
	}
	t, err := api.CleanPath(to)
	if err != nil {
		return fmt.Errorf("invalid to %q: %w", op.To, err)
	}
	if path.Base(t) == "context.md" {
		return fmt.Errorf("to %s is a context file, kept by the engine: give a folder or an entry path ending in .md", t)
	}
	v.target, v.toFolder = t, !tree.IsEntryPath(t)
	if v.folder && !v.toFolder {
		return fmt.Errorf("cannot move the folder %s to %s: a folder moves to a folder", v.path, t)
	}
	return nil
}

// cleanRelation validates a relation path; a leading "@" (the legacy
// relation form) is dropped. An empty relation yields "".
func cleanRelation(r string) (string, error) {
	r = strings.TrimPrefix(strings.TrimSpace(r), "@")
	if r == "" {
		return "", nil
	}
	return api.CleanPath(r)
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// checkUTF8 reports the first field of op that is not valid UTF-8.
func checkUTF8(op *api.Operation) (string, bool) {
	type field struct {
		name string
		s    string
	}
	fields := []field{
		{"type", op.Type}, {"path", op.Path}, {"title", op.Title}, {"summary", op.Summary},
		{"reason", op.Reason}, {"mergeTarget", op.MergeTarget}, {"to", op.To},
		{"base", op.Base}, {"targetBase", op.TargetBase},
	}
	c := &op.Content
	if r := c.RawConcept; r != nil {
		fields = append(fields, field{"rawConcept.task", r.Task}, field{"rawConcept.changes", r.Changes},
			field{"rawConcept.flow", r.Flow}, field{"rawConcept.timestamp", r.Timestamp}, field{"rawConcept.author", r.Author})
		for _, f := range r.Files {
			fields = append(fields, field{"rawConcept.files", f})
		}
	}
	if n := c.Narrative; n != nil {
		for _, p := range api.NarrativeParts {
			fields = append(fields, field{"narrative." + p.Name, *p.Get((*api.Narrative)(n))})
		}
	}
	for _, f := range c.Facts {
		fields = append(fields, field{"facts", f.Subject}, field{"facts", f.Statement}, field{"facts", f.Category})
	}
	lists := []struct {
		name string
		list []string
	}{{"snippets", c.Snippets}, {"relations", c.Relations}, {"tags", c.Tags}, {"keywords", c.Keywords}}
	for _, l := range lists {
		for _, s := range l.list {
			fields = append(fields, field{l.name, s})
		}
	}
	for _, f := range fields {
		if !utf8.ValidString(f.s) {
			return f.name, false
		}
	}
	return "", true
}

// rawConceptFields names the text fields of a raw concept.
var rawConceptFields = []struct {
	name string
	get  func(*api.RawConcept) *string
}{
	{"task", func(r *api.RawConcept) *string { return &r.Task }},
	{"changes", func(r *api.RawConcept) *string { return &r.Changes }},
	{"flow", func(r *api.RawConcept) *string { return &r.Flow }},
	{"timestamp", func(r *api.RawConcept) *string { return &r.Timestamp }},
	{"author", func(r *api.RawConcept) *string { return &r.Author }},
}
