package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// editsOnFirstWrite is a person saving a file in an editor while a tidy
// applies its plan: at the apply's first write to the tree.
type editsOnFirstWrite struct {
	*countingFS
	path, content string
	done          bool
}

// edit saves the person's file before the first write to the tree.
func (f *editsOnFirstWrite) edit(p string) error {
	if f.done || strings.HasPrefix(p, api.StateDir+"/") {
		return nil
	}
	f.done = true
	return f.countingFS.MemFS.WriteFile(f.path, []byte(f.content))
}

func (f *editsOnFirstWrite) WriteFile(p string, data []byte) error {
	if err := f.edit(p); err != nil {
		return err
	}
	return f.countingFS.WriteFile(p, data)
}

func (f *editsOnFirstWrite) Swap(p string, data, old []byte, existed bool) error {
	if err := f.edit(p); err != nil {
		return err
	}
	return f.countingFS.Swap(p, data, old, existed)
}

// A person edits an entry of a tidy suggestion after the plan and while
// it is applied: the entry a split is splitting (its first part is being
// written), or the second copy of a group a merge is merging (its first
// MERGE is being written). The edit is kept, as saved: the suggestion's
// operation on it is a conflict (the split is undone), as an agent's
// would be.
func TestTidyApplyKeepsWhatAPersonEdited(t *testing.T) {
	t.Run("split", func(t *testing.T) {
		const runbook = "ops/billing/runbook.md"
		mem := tidyTree(t)
		if err := mem.WriteFile(runbook, []byte(bigEntry())); err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(bigEntry(), "Never retry by hand.", "Never retry by hand; Ana wrote this while the tidy ran.", 1)
		fs := &editsOnFirstWrite{countingFS: mem, path: runbook, content: edited}
		e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
		defer e.Close()
		res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096, Apply: true})
		if !fs.done || res.Applied == nil || res.Applied.Summary.Failed == 0 {
			t.Fatalf("a split of an entry edited meanwhile: %+v", res.Applied)
		}
		if got, _ := mem.ReadFile(runbook); string(got) != edited {
			t.Errorf("%s after the split:\n%s", runbook, got)
		}
		list, _ := mem.ReadDir("ops/billing")
		for _, d := range list {
			if strings.HasPrefix(d.Name, "runbook_") || strings.HasPrefix(d.Name, "runbook (") {
				t.Errorf("part %s left behind", d.Name)
			}
		}
	})
	t.Run("merge", func(t *testing.T) {
		files := tidyFiles()
		third := "ops/billing/invoice_policy_third.md"
		files[third] = files[copyPath]
		mem := newFS(t, files)
		e, _ := openEngine(t, mem, &clock{now: day0}, Options{})
		plan := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}})
		e.Close()
		if len(plan.Suggestions) != 1 || len(plan.Suggestions[0].Operations) != 2 {
			t.Fatalf("plan: %+v", plan.Suggestions)
		}
		second := plan.Suggestions[0].Operations[1].Path
		before, _ := mem.ReadFile(second)
		edited := strings.Replace(string(before), policyText[0], policyText[0]+" Ana wrote this while the tidy ran.", 1)
		fs := &editsOnFirstWrite{countingFS: mem, path: second, content: edited}
		e, _ = openEngine(t, fs, &clock{now: day0}, Options{})
		defer e.Close()
		res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}, Apply: true})
		if !fs.done || res.Applied == nil {
			t.Fatalf("no write: %+v", res)
		}
		kept := false
		for _, p := range plan.Suggestions[0].Paths {
			if b, err := mem.ReadFile(p); err == nil && strings.Contains(string(b), "Ana wrote this while the tidy ran.") {
				kept = true
			}
		}
		if !kept {
			t.Errorf("the edit of %s is in no file (%+v)", second, res.Applied.Applied)
		}
		if i := slices.IndexFunc(res.Applied.Applied, func(a api.Applied) bool { return a.Path == second }); i < 0 || res.Applied.Applied[i].Status != api.StatusConflict {
			t.Errorf("the merge of %s: %+v", second, res.Applied.Applied)
		}
	})
}

// A split cuts an entry at blank lines, never inside a fenced code block:
// a person's code (Python, with blank lines between its functions) stays
// one block in one part, with what followed it outside the fence.
func TestTidySplitKeepsCodeBlocksWhole(t *testing.T) {
	const scripts = "ops/billing/scripts.md"
	var code strings.Builder
	code.WriteString("```python\n")
	for i := range 60 {
		fmt.Fprintf(&code, "def step_%d(queue):\n    # drain queue %d and log what was left behind\n    return queue.drain(%d)\n\n", i, i, i)
	}
	code.WriteString("```")
	fs := tidyTree(t)
	text := "---\ntitle: Scripts\n---\n\n## Narrative\nThe billing scripts.\n\n" + code.String() + "\n\nAfter the code.\n\n## Facts\n- **queues**: sixty [capacity]\n"
	if err := fs.WriteFile(scripts, []byte(text)); err != nil {
		t.Fatal(err)
	}
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	defer e.Close()
	res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096, Apply: true})
	if len(res.Suggestions) != 1 || res.Applied.Summary.Failed != 0 {
		t.Fatalf("result = %+v", res)
	}
	whole := false
	for _, p := range res.Suggestions[0].Paths {
		data, err := fs.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		whole = whole || strings.Contains(s, code.String())
		if strings.Count(s, "```")%2 != 0 {
			t.Errorf("%s holds an unclosed fence:\n%s", p, s)
		}
		if i := strings.Index(s, "After the code."); i >= 0 && strings.Count(s[:i], "```")%2 != 0 {
			t.Errorf("in %s the text after the code block is inside a fence:\n%s", p, s)
		}
	}
	if !whole {
		t.Error("the code block is in no part whole")
	}
}

// A split ends the entry's first part at its path, so that links to it
// still resolve: an entry named as a person names files (Obsidian's
// "My Runbook.md"), or with a name too long for the parts' names, which
// curate would write under other names, is not split.
func TestTidySplitKeepsTheEntrysName(t *testing.T) {
	for _, name := range []string{
		"My Runbook",
		strings.Repeat("runbook", 14), // 98 bytes: over a written name's 80
		"runbook_of_the_billing_service_for_the_team_" + strings.Repeat("x", 30), // 74: its parts' names would be over 80
		"runbook", // split, at its own name
	} {
		p := "ops/billing/" + name + ".md"
		fs := tidyTree(t)
		if err := fs.WriteFile(p, []byte(bigEntry())); err != nil {
			t.Fatal(err)
		}
		if err := fs.WriteFile("ops/billing/oncall.md", []byte("---\ntitle: On call\nrelated: ["+p+"]\n---\n\n## Narrative\nSee [["+name+"]].\n")); err != nil {
			t.Fatal(err)
		}
		e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
		res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096, Apply: true})
		e.Close()
		if res.Applied != nil && res.Applied.Summary.Failed > 0 {
			t.Errorf("%s: a split failed: %+v", name, res.Applied.Applied)
		}
		if _, err := fs.ReadFile(p); err != nil {
			t.Errorf("%s is gone after tidy (%d suggestions): links to it are broken", p, len(res.Suggestions))
		}
		if split := len(res.Suggestions) > 0; split != (name == "runbook") {
			t.Errorf("%s: split %v", name, split)
		}
	}
}

// An entry outside domain/topic[/subtopic] (a top-level folder of notes,
// or deeper folders, as people keep them) is not split: curate would
// refuse to create its parts there, and every apply failed the same way.
func TestTidySplitsOnlyWherePartsCanBeWritten(t *testing.T) {
	for _, p := range []string{"notes/runbook.md", "a/b/c/d/runbook.md"} {
		fs := tidyTree(t)
		if err := fs.WriteFile(p, []byte(bigEntry())); err != nil {
			t.Fatal(err)
		}
		e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
		res := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidySplit}, SplitBytes: 4096})
		e.Close()
		for _, s := range res.Suggestions {
			if slices.Contains(s.Paths, p) {
				t.Errorf("%s: a split it cannot apply: %+v", p, s)
			}
		}
	}
}

// A plan shown now and applied later through curate (an agent reading
// arbor-tidy's suggestions, then sending their operations) carries the
// versions it was planned from: an entry a person edited in between is a
// conflict that keeps the edit, though the engine read the edit before
// the curate call; without the edit the plan applies.
func TestTidyPlanAppliedLaterKeepsAPersonsEdit(t *testing.T) {
	for _, edit := range []bool{true, false} {
		mem := newFS(t, tidyFiles())
		e, _ := openEngine(t, mem, &clock{now: day0}, Options{})
		plan := runTidy(t, e, api.TidyParams{Kinds: []string{api.TidyMerge}})
		if len(plan.Suggestions) != 1 {
			t.Fatalf("plan: %+v", plan.Suggestions)
		}
		ops := plan.Suggestions[0].Operations
		var source string
		for _, op := range ops {
			if op.Base == "" || (op.Type == api.OpMerge && op.TargetBase == "") {
				t.Errorf("%s %s planned without the version it was planned from: %+v", op.Type, op.Path, op)
			}
			if op.Type == api.OpMerge {
				source = op.Path
			}
		}
		var edited []byte
		if edit {
			before, _ := mem.ReadFile(source)
			edited = []byte(strings.Replace(string(before), policyText[0], policyText[0]+" Ana wrote this after the plan.", 1))
			if err := mem.WriteFile(source, edited); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Refresh(api.RefreshParams{Paths: []string{source}}); err != nil { // the watcher
				t.Fatal(err)
			}
		}
		res := e.Curate(api.CurateParams{Operations: ops})
		i := slices.IndexFunc(res.Applied, func(a api.Applied) bool { return a.Path == source })
		switch {
		case i < 0:
			t.Fatalf("no outcome for %s: %+v", source, res.Applied)
		case edit && res.Applied[i].Status != api.StatusConflict:
			t.Errorf("the merge of %s, edited after the plan: %s: %s", source, res.Applied[i].Status, res.Applied[i].Message)
		case edit:
			if got, _ := mem.ReadFile(source); string(got) != string(edited) {
				t.Errorf("%s after the conflict:\n%s", source, got)
			}
		case res.Applied[i].Status != api.StatusSuccess:
			t.Errorf("the plan, nothing edited since: %s: %s", res.Applied[i].Status, res.Applied[i].Message)
		}
		e.Close()
	}
}
