package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Operation types, as they appear in Applied.Type and the audit log.
const (
	OpAdd    = "ADD"
	OpUpdate = "UPDATE"
	OpUpsert = "UPSERT"
	OpMerge  = "MERGE"
	OpDelete = "DELETE"
	OpMove   = "MOVE"
)

// Status values of Applied.Status.
const (
	StatusSuccess = "success"
	StatusFailed  = "failed"
	// StatusConflict: the entry's file changed on disk since the session
	// read it (an editor, git, another process), in a way the operation
	// cannot be applied to; nothing was written. It counts as failed.
	StatusConflict = "conflict"
)

// Operation is one curate operation as it arrives in JSON (docs/ABI.md §4.2).
type Operation struct {
	// Type is ADD, UPDATE, UPSERT, MERGE, DELETE or MOVE (case-insensitive on input).
	Type string `json:"type"`
	// Path is a folder domain/topic[/subtopic] (the entry is then named
	// after Title), or a full entry path ending in ".md".
	Path string `json:"path"`
	// Title names the entry (and its file, with a folder Path). For a MERGE
	// whose Path is a folder it locates the source; with a full source path
	// it becomes the merged entry's title.
	Title   string  `json:"title,omitempty"`
	Summary string  `json:"summary,omitempty"`
	Content Content `json:"content"`
	// Reason is required: why the operation is made. It is written into the
	// entry's "## Reason" section and into the audit log.
	Reason string `json:"reason"`
	// MergeTarget is the entry a MERGE folds Path into (a path, ".md" optional).
	MergeTarget string `json:"mergeTarget,omitempty"`
	// To is where a MOVE puts Path (docs/ABI.md §4.2): for an entry, a
	// folder domain/topic[/subtopic] it moves into keeping its file name,
	// or a full entry path ending in ".md"; for a folder, an existing
	// folder it moves into, or else its new path.
	To string `json:"to,omitempty"`
	// Base is the version of the entry at Path that the operation was made
	// from (ReadResult.Version, or an earlier Applied.Version): when the
	// file holds another version now (a person's edit, another agent's
	// write), the operation is a conflict and writes nothing. Without it
	// the engine can only compare with what it last read itself, which a
	// watching engine reads again before every call (docs/ABI.md §4.2).
	Base string `json:"base,omitempty"`
	// TargetBase is Base for a MERGE's MergeTarget.
	TargetBase string `json:"targetBase,omitempty"`
	// Note is what ingestion carries from a source note's own front matter
	// that the fields above cannot say (docs/ABI.md §4.11): its dates and
	// the keys an entry has no field for. Only the engine's ingest sets it,
	// in process; a request never does (it is not part of the JSON).
	Note *NoteMeta `json:"-"`
	// Stamp, when set, marks the entry as the engine's ingest writes it,
	// holding the source's piece of that hash: the file carries the
	// version of its own bytes and the piece's hash (docs/format.md,
	// "Ingested entries"), by which a later ingest tells a person's edit,
	// and an unchanged piece without the machine-local manifest. Only the
	// engine's ingest sets it, in process, like Note.
	Stamp string `json:"-"`
}

// NoteMeta is the front matter an ingested note gives its entry beyond the
// title, summary, tags and keywords: CreatedAt and UpdatedAt replace the
// times the engine would set when they are not zero, and Extra sets those
// keys (YAML values on one line, as KeyValue says) and keeps the others.
type NoteMeta struct {
	CreatedAt, UpdatedAt time.Time
	Extra                []KeyValue
}

// KeyValue is one front-matter key an entry has no field for; Value is the
// YAML text of the value as it is rendered after "key: ". The codec stores
// it in flow style on one line ("82", "validated", "[a, b]", "{k: v}") and
// accepts any single YAML value (a scalar, a flow value, or an indented
// block beginning with a newline), written back in that one-line form.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Content is the knowledge an operation writes. Every field is optional.
type Content struct {
	RawConcept *RawConcept `json:"rawConcept,omitempty"`
	// Narrative accepts a JSON string (free prose) or an object with the
	// parts structure, dependencies, highlights, rules, examples, diagrams
	// (and text).
	Narrative *Narrative `json:"narrative,omitempty"`
	Facts     []Fact     `json:"facts,omitempty"`
	Snippets  []string   `json:"snippets,omitempty"`
	// Relations are entry paths, relative to the memory root.
	Relations []string `json:"relations,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Keywords  []string `json:"keywords,omitempty"`
}

// RawConcept is an entry's "## Raw Concept" section: where the knowledge
// came from.
type RawConcept struct {
	Task      string   `json:"task,omitempty"`
	Changes   string   `json:"changes,omitempty"`
	Files     []string `json:"files,omitempty"`
	Flow      string   `json:"flow,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Author    string   `json:"author,omitempty"`
}

// Fact is one line of an entry's "## Facts" section:
// "- **subject**: statement [category]".
type Fact struct {
	Subject   string `json:"subject,omitempty"`
	Statement string `json:"statement"`
	Category  string `json:"category,omitempty"`
}

// Narrative is an entry's "## Narrative" section. Text is free prose
// written directly under the heading; the named parts are its "### "
// subsections. Its JSON form is a string (Text alone) or an object of the
// parts.
type Narrative struct {
	Text         string `json:"text,omitempty"`
	Structure    string `json:"structure,omitempty"`
	Dependencies string `json:"dependencies,omitempty"`
	Highlights   string `json:"highlights,omitempty"`
	Rules        string `json:"rules,omitempty"`
	Examples     string `json:"examples,omitempty"`
	Diagrams     string `json:"diagrams,omitempty"`
}

// NarrativePart is one part of a Narrative: its name (its JSON key) and
// where it is.
type NarrativePart struct {
	Name string
	Get  func(*Narrative) *string
}

// NarrativeParts lists the parts of a Narrative in rendering order, Text
// first.
var NarrativeParts = []NarrativePart{
	{"text", func(n *Narrative) *string { return &n.Text }},
	{"structure", func(n *Narrative) *string { return &n.Structure }},
	{"dependencies", func(n *Narrative) *string { return &n.Dependencies }},
	{"highlights", func(n *Narrative) *string { return &n.Highlights }},
	{"rules", func(n *Narrative) *string { return &n.Rules }},
	{"examples", func(n *Narrative) *string { return &n.Examples }},
	{"diagrams", func(n *Narrative) *string { return &n.Diagrams }},
}

// UnmarshalJSON accepts a JSON string (stored as Text), an object, or null.
func (n *Narrative) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if s, ok, err := jsonString(b); ok {
		if err != nil {
			return fmt.Errorf("narrative: %w", err)
		}
		*n = Narrative{Text: s}
		return nil
	}
	if err := checkKeys(b, "narrative", narrativeKeys, nil); err != nil {
		return err
	}
	var obj struct {
		Text         flexText `json:"text"`
		Structure    flexText `json:"structure"`
		Dependencies flexText `json:"dependencies"`
		Highlights   flexText `json:"highlights"`
		Rules        flexText `json:"rules"`
		Examples     flexText `json:"examples"`
		Diagrams     flexText `json:"diagrams"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("narrative: want a string or an object: %w", err)
	}
	*n = Narrative{
		Text: string(obj.Text), Structure: string(obj.Structure), Dependencies: string(obj.Dependencies),
		Highlights: string(obj.Highlights), Rules: string(obj.Rules), Examples: string(obj.Examples), Diagrams: string(obj.Diagrams),
	}
	return nil
}

// MarshalJSON writes a narrative that only has Text as a JSON string, and
// any other as an object of its non-empty parts.
func (n Narrative) MarshalJSON() ([]byte, error) {
	if n.Structure == "" && n.Dependencies == "" && n.Highlights == "" && n.Rules == "" && n.Examples == "" && n.Diagrams == "" {
		return json.Marshal(n.Text)
	}
	type parts Narrative // without this method
	return json.Marshal(parts(n))
}

// flexText is a narrative part: a string, or a list of strings joined by
// newlines (models sometimes send rules as a list).
type flexText string

func (f *flexText) UnmarshalJSON(b []byte) error {
	list, err := decodeStrings(b)
	if err != nil {
		return err
	}
	*f = flexText(strings.Join(list, "\n"))
	return nil
}

// jsonString decodes b, a trimmed JSON value, when it is a string (ok);
// for any other value it decodes nothing and ok is false.
func jsonString(b []byte) (s string, ok bool, err error) {
	if len(b) == 0 || b[0] != '"' {
		return "", false, nil
	}
	err = json.Unmarshal(b, &s)
	return s, true, err
}

// decodeStrings accepts null, a string or a list of strings.
func decodeStrings(b []byte) ([]string, error) {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil, nil
	}
	if s, ok, err := jsonString(b); ok {
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("want a string or a list of strings: %w", err)
	}
	return list, nil
}

// stringList is a list that also accepts a single string.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	list, err := decodeStrings(b)
	if err != nil {
		return err
	}
	*l = list
	return nil
}

// fileList is rawConcept.files: a list, or one string of names separated
// by commas or newlines.
type fileList []string

func (l *fileList) UnmarshalJSON(b []byte) error {
	list, err := decodeStrings(b)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	var out []string
	for _, s := range list {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	*l = out
	return nil
}

// rawConceptJSON is the input form of RawConcept.
type rawConceptJSON struct {
	Task      string   `json:"task"`
	Changes   string   `json:"changes"`
	Files     fileList `json:"files"`
	Flow      string   `json:"flow"`
	Timestamp string   `json:"timestamp"`
	Author    string   `json:"author"`
}

// UnmarshalJSON decodes a raw concept, refusing keys it does not have.
func (r *rawConceptJSON) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "rawConcept", rawConceptKeys, nil); err != nil {
		return err
	}
	type plain rawConceptJSON // without this method
	return json.Unmarshal(b, (*plain)(r))
}

// factJSON is a fact: an object {subject, statement, category} or a plain
// string (the statement).
type factJSON Fact

func (f *factJSON) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if s, ok, err := jsonString(b); ok {
		if err != nil {
			return fmt.Errorf("fact: %w", err)
		}
		*f = factJSON{Statement: s}
		return nil
	}
	if err := checkKeys(b, "fact", factKeys, nil); err != nil {
		return err
	}
	var t Fact
	if err := json.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("fact: want an object {subject, statement, category} or a string: %w", err)
	}
	*f = factJSON(t)
	return nil
}

// UnmarshalJSON decodes content leniently, as language models write it:
// rawConcept.files may be a string or a list, lists of strings may be a
// single string, facts may be plain strings, and a content that is a plain
// string is taken as the narrative. Unknown keys are refused (keys.go).
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if s, ok, err := jsonString(b); ok {
		if err != nil {
			return fmt.Errorf("content: %w", err)
		}
		*c = Content{}
		if s != "" {
			c.Narrative = &Narrative{Text: s}
		}
		return nil
	}
	if err := checkKeys(b, "content", contentKeys, inOperation); err != nil {
		return err
	}
	var in struct {
		RawConcept *rawConceptJSON `json:"rawConcept"`
		Narrative  *Narrative      `json:"narrative"`
		Facts      []factJSON      `json:"facts"`
		Snippets   stringList      `json:"snippets"`
		Relations  stringList      `json:"relations"`
		Tags       stringList      `json:"tags"`
		Keywords   stringList      `json:"keywords"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	out := Content{
		Narrative: in.Narrative,
		Snippets:  in.Snippets,
		Relations: in.Relations,
		Tags:      in.Tags,
		Keywords:  in.Keywords,
	}
	if in.RawConcept != nil {
		r := in.RawConcept
		out.RawConcept = &RawConcept{Task: r.Task, Changes: r.Changes, Files: r.Files, Flow: r.Flow, Timestamp: r.Timestamp, Author: r.Author}
	}
	for _, f := range in.Facts {
		out.Facts = append(out.Facts, Fact(f))
	}
	*c = out
	return nil
}

// CurateParams are the parameters of "curate".
type CurateParams struct {
	Operations []Operation `json:"operations"`
}

// Applied is the outcome of one operation.
type Applied struct {
	Type string `json:"type"`
	// Path is the entry (or folder) path actually touched.
	Path string `json:"path"`
	// Status is "success", "failed" or "conflict" (StatusConflict).
	Status  string `json:"status"`
	Message string `json:"message"`
	// Carried lists what an UPDATE carried over from the old entry because
	// the new content lacked it, e.g. "relations", "snippets", "narrative.rules".
	Carried []string `json:"carried,omitempty"`
	// BrokenRelations lists, for a DELETE, the entries outside the deleted
	// set that still link to a removed path.
	BrokenRelations []string `json:"brokenRelations,omitempty"`
	// To is, for a successful MOVE, where Path went: the entry's new path,
	// or the folder's.
	To string `json:"to,omitempty"`
	// Version is, for a successful ADD, UPDATE, UPSERT or MERGE, the
	// version of the entry it wrote (Path; a MERGE's target): the Base of
	// a next operation made from what this one wrote.
	Version string `json:"version,omitempty"`
}

// Summary counts the outcomes of a curate call.
type Summary struct {
	Added   int `json:"added"`
	Updated int `json:"updated"`
	Merged  int `json:"merged"`
	Deleted int `json:"deleted"`
	Moved   int `json:"moved"`
	Failed  int `json:"failed"`
}

// CurateResult is the answer of "curate": one Applied per operation, in
// order, and the summary. A failed operation is reported here, not as an
// error of the call, and changes nothing.
type CurateResult struct {
	Applied []Applied `json:"applied"`
	Summary Summary   `json:"summary"`
}
