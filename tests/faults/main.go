// Command faults kills arbor processes at random moments while two of them
// write one memory root and an editor changes its files, and checks after
// each kill what a user would find:
//
//   - lost: a sentence the editor saved, or an operation the audit log
//     says was applied, missing from the files;
//   - torn: a markdown file that does not parse (half written);
//   - resurrected: a file the editor deleted that is back;
//   - audit-missing: an operation whose change is in the files but which
//     has no line in the audit log (once the root was opened again, as
//     any next command does).
//
// Each round starts two writers — a curate batch (ADDs, some linking to
// earlier notes, UPDATEs, and MERGEs of one note into another), an add,
// an ingest, or a folder MOVE — and an editor saving and deleting files the way editors do (a
// temporary file, then a rename; with -editor inplace, the way VS Code,
// `echo >>` and many sync tools do: the file truncated and written in
// place, or appended to, so that a writer may read it half written),
// kills one or both writers with SIGKILL after a random delay, then opens
// the root (`arbor doctor --fix --json`) and checks the tree: every
// sentence the editor ever saved, and each seed entry's own sentence,
// must still be there.
//
// A folder MOVE carries a topic (entries linking in, out and within it,
// attachments, a 150 MiB sparse file, a subtopic) between two places, a
// MOVE each time from where it is to the other. After each round every
// file of it must be at exactly one place (an entry the MOVE edits may be
// at both after a kill), whole, and every relation in the tree must name
// a file; a MOVE that moved it must be in the audit log as applied, and
// one that split it as interrupted. Half the time such a MOVE is killed
// within milliseconds of its journal's appearing, which is when it
// changes files; a split folder is then moved the rest of the way by hand
// and its links pointed by hand (they name files not there until then),
// as a person reading the audit line would. A MERGE of a note must leave
// the source's markers in its target, or the source as it was; a source
// gone means a MERGE in the audit log as applied, and links to it follow
// it (the check of every relation). It prints a markdown report:
//
//	./build.sh && go run ./tests/faults -n 200 -report /tmp/rename.md
//	go run ./tests/faults -n 200 -editor inplace -report /tmp/inplace.md
//
// With -mode sync it kills `arbor sync` instead, between two roots that
// share a repository (sync.go).
//
// tests/faults/REPORT.md holds the reports, then what was checked beyond
// kills (what an engine write does to a file a person wrote).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 200, "rounds, each with at least one SIGKILL")
	bin := flag.String("bin", "bin/arbor", "the arbor binary")
	seed := flag.Int64("seed", 1, "random seed")
	report := flag.String("report", "", "write the markdown report here too")
	keep := flag.Bool("keep", false, "keep the memory root")
	editor := flag.String("editor", "rename", "how the editor saves: rename (a temporary file, then a rename) or inplace (truncate and write, or append)")
	mode := flag.String("mode", "write", "write (writers and an editor on one root) or sync (two roots syncing through a shared repository, sync.go)")
	js := flag.Bool("js", false, "with -mode sync: the second root syncs from Node (the JS package), over HTTP")
	flag.Parse()
	var md string
	var failed bool
	switch {
	case *mode == "sync":
		r, err := runSync(*n, *bin, *seed, *keep, *js)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(2)
		}
		md, failed = r.markdown(*n, *seed), r.failed()
	case *mode != "write":
		fmt.Fprintln(os.Stderr, "faults: -mode is write or sync")
		os.Exit(2)
	case *editor != "rename" && *editor != "inplace":
		fmt.Fprintln(os.Stderr, "faults: -editor is rename or inplace")
		os.Exit(2)
	default:
		r, err := run(*n, *bin, *seed, *keep, *editor == "inplace")
		if err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(2)
		}
		md, failed = r.markdown(*n, *seed, *editor), r.failed()
	}
	fmt.Print(md)
	if *report != "" {
		if err := os.WriteFile(*report, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(2)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// result counts what the rounds did and found.
type result struct {
	Rounds, Kills, Processes              int
	OpsSent, OpsApplied, Conflicts        int
	EditorSaves, EditorDeletes            int
	EditorStale                           int // saves given up: the file changed since the editor read it
	Recovered, Leftovers                  int
	Lost, Torn, Resurrected, AuditMissing int
	InPlace                               bool // the editor writes in place
	Moves                                 *moved
	Notes                                 *notes
	Problems                              []string
	Elapsed                               time.Duration
}

// failed tells whether a round found a file lost, torn, resurrected,
// unaudited, duplicated by a MOVE, or a link naming no file.
func (r *result) failed() bool {
	return r.Lost+r.Torn+r.Resurrected+r.AuditMissing+r.Moves.Duplicated+r.Moves.LinksBroken+r.Moves.Diverged+r.Moves.Copied > 0
}

func (r *result) problem(format string, args ...any) {
	if len(r.Problems) < 50 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

const (
	seeds      = 40
	seedFolder = "notes/seed"
)

// editorFile is what the editor knows of one seed entry: the sentence it
// was made with and every marker saved into it since.
type editorFile struct {
	own     string
	markers []string
	deleted bool
}

// op is one operation a writer sent: its reason is unique, and its
// change has a marker that shows it on disk. Path is the entry an UPDATE
// names; an ADD's or an ingest's entry is found by its marker, and the
// audit log names it.
type op struct {
	reason, kind, path, marker string
	alt                        string // an UPDATE of the moved folder: the path at its other place
}

func run(n int, bin string, seed int64, keep, inPlace bool) (*result, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (run ./build.sh first)", bin, err)
	}
	root, err := os.MkdirTemp("", "arbor-faults-")
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "root:", root)
	} else {
		defer os.RemoveAll(root)
	}
	srcDir, err := os.MkdirTemp("", "arbor-faults-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(srcDir)
	if out, err := exec.Command(bin, "init", root).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("init: %v\n%s", err, out)
	}
	rng := rand.New(rand.NewSource(seed))
	mv, err := newMoved(root, rng)
	if err != nil {
		return nil, err
	}
	files := map[string]*editorFile{}
	for i := 0; i < seeds; i++ {
		p := fmt.Sprintf("%s/seed_%02d.md", seedFolder, i)
		own := fmt.Sprintf("Seed entry number %d.", i)
		text := fmt.Sprintf("---\ntitle: Seed %02d\n%s---\n\n## Narrative\n%s\n", i, mv.seedLinks(p), own)
		if err := os.MkdirAll(filepath.Join(root, seedFolder), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
			return nil, err
		}
		files[p] = &editorFile{own: own}
	}
	res := &result{InPlace: inPlace, Moves: mv, Notes: newNotes()}
	var sent []op
	start := time.Now()
	for round := 0; round < n; round++ {
		ops, err := res.round(rng, bin, root, srcDir, round, files)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
		}
		sent = append(sent, ops...)
		if err := res.check(bin, root, files, sent); err != nil {
			return nil, fmt.Errorf("round %d: check: %w", round, err)
		}
		res.Rounds++
		if (round+1)%20 == 0 {
			fmt.Fprintf(os.Stderr, "faults: %d rounds, %d kills, %d folder MOVEs applied, %d interrupted; lost %d, torn %d, resurrected %d, audit-missing %d, duplicated %d, diverged %d, links naming no file %d\n",
				round+1, res.Kills, mv.Applied, mv.Interrupted, res.Lost, res.Torn, res.Resurrected, res.AuditMissing, mv.Duplicated, mv.Diverged, mv.LinksBroken)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// round runs two writers and the editor, kills, and waits.
func (res *result) round(rng *rand.Rand, bin, root, srcDir string, round int, files map[string]*editorFile) ([]op, error) {
	var ops []op
	var procs []*exec.Cmd
	var exited []chan struct{}
	firstMoves := false
	for w := 0; w < 2; w++ {
		cmd, wops, err := writer(rng, bin, root, srcDir, round, w, files, res.Moves, res.Notes)
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		res.Processes++
		procs = append(procs, cmd)
		ops = append(ops, wops...)
		firstMoves = firstMoves || w == 0 && len(res.Moves.reasons) > 0
		done := make(chan struct{})
		exited = append(exited, done)
		go func() {
			defer close(done)
			cmd.Wait()
		}()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res.edit(rng.Int63(), root, round, files, stop)
	}()
	// Kill the first writer after a random delay, the second one half
	// the time: a kill lands during start-up, open, the operations, the
	// index flush or close. A folder MOVE changes its files within a few
	// milliseconds, after some 300 ms of start-up and open, which vary by
	// more than that: half the time, its kill comes within 8 ms of the
	// journal's appearing, which comes just before the first change.
	if firstMoves && rng.Intn(2) == 0 {
		atJournal(root, exited[0])
		time.Sleep(time.Duration(rng.Intn(8000)) * time.Microsecond)
	} else {
		time.Sleep(time.Duration(rng.Intn(1500)) * time.Millisecond)
	}
	kill(procs[0], exited[0], res)
	if rng.Intn(2) == 0 {
		time.Sleep(time.Duration(rng.Intn(800)) * time.Millisecond)
		kill(procs[1], exited[1], res)
	}
	for _, done := range exited {
		<-done
	}
	close(stop)
	wg.Wait()
	res.OpsSent += len(ops)
	return ops, nil
}

// atJournal waits until the journal of an operation appears, the
// process exits, or 3 s have passed.
func atJournal(root string, exited chan struct{}) {
	journal := filepath.Join(root, ".arbor", "journal.json")
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exited:
			return
		default:
		}
		if _, err := os.Stat(journal); err == nil {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// kill kills p unless it has exited.
func kill(p *exec.Cmd, exited chan struct{}, res *result) {
	select {
	case <-exited:
		return
	default:
	}
	if p.Process.Signal(syscall.SIGKILL) == nil {
		res.Kills++
	}
}

// writer makes one writer process: a curate batch, an add, an ingest or
// a folder MOVE.
func writer(rng *rand.Rand, bin, root, srcDir string, round, w int, files map[string]*editorFile, mv *moved, nt *notes) (*exec.Cmd, []op, error) {
	id := func(i int) string { return fmt.Sprintf("w%d-r%d-op%d", w, round, i) }
	domain := fmt.Sprintf("agents/writer_%d", w)
	switch rng.Intn(4) {
	case 3:
		return mv.writer(bin, root, round, w), nil, nil
	case 0: // a curate batch of ADDs (some linking to earlier notes), MERGEs of notes, and UPDATEs of seed entries and of the moved folder's
		var batch []map[string]any
		var ops []op
		// First in the batch, half the time: most batches are killed
		// before their last operations.
		if rng.Intn(2) == 0 {
			if m := nt.merge(rng, fmt.Sprintf("w%d-r%d-merge", w, round)); m != nil {
				batch = append(batch, m)
			}
		}
		for i := 0; i < 4+rng.Intn(12); i++ {
			marker := "M-" + id(i)
			if rng.Intn(2) == 0 {
				title := fmt.Sprintf("Note %s", id(i))
				add := map[string]any{"type": "ADD", "path": domain, "title": title, "reason": id(i),
					"content": map[string]any{"narrative": "Written by the agent: " + marker + "."}}
				if rng.Intn(2) == 0 {
					if to := nt.linkTarget(rng); to != "" {
						add["relations"] = []string{to}
					}
				}
				batch = append(batch, add)
				ops = append(ops, op{reason: id(i), kind: "ADD", marker: marker})
				continue
			}
			p := fmt.Sprintf("%s/seed_%02d.md", seedFolder, rng.Intn(seeds))
			if rng.Intn(4) == 0 {
				p = mv.updateTarget(rng)
			}
			batch = append(batch, map[string]any{"type": "UPDATE", "path": p, "reason": id(i),
				"content": map[string]any{"facts": []any{"agent fact " + marker}}})
			ops = append(ops, op{reason: id(i), kind: "UPDATE", path: p, alt: mv.other(p), marker: marker})
		}
		data, _ := json.Marshal(map[string]any{"operations": batch})
		cmd := exec.Command(bin, "--root", root, "curate", "-")
		cmd.Stdin = bytes.NewReader(data)
		return cmd, ops, nil
	case 1: // one add
		marker := "M-" + id(0)
		title := fmt.Sprintf("Note %s", id(0))
		cmd := exec.Command(bin, "--root", root, "add", "--path", domain, "--title", title,
			"--narrative", "Written by the agent: "+marker+".", "--reason", id(0))
		return cmd, []op{{reason: id(0), kind: "ADD", marker: marker}}, nil
	}
	// An ingest of a new source with a few sections.
	name := fmt.Sprintf("source_w%d_r%d.md", w, round)
	var b strings.Builder
	fmt.Fprintf(&b, "# Source %d %d\n\n", w, round)
	var ops []op
	for i := 0; i < 2+rng.Intn(6); i++ {
		marker := "M-" + id(i)
		fmt.Fprintf(&b, "## Part %s\n\nThe ingested text %s.\n\n", strings.ReplaceAll(id(i), "-", " "), marker)
		ops = append(ops, op{reason: "ingest " + name, kind: "INGEST", marker: marker})
	}
	src := filepath.Join(srcDir, name)
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		return nil, nil, err
	}
	return exec.Command(bin, "--root", root, "ingest", "--domain", fmt.Sprintf("ingested_%d", w), src), ops, nil
}

// edit saves and deletes seed entries as an editor would, until stop.
func (res *result) edit(seed int64, root string, round int, files map[string]*editorFile, stop chan struct{}) {
	rng := rand.New(rand.NewSource(seed))
	var live []string
	for p, f := range files {
		if !f.deleted {
			live = append(live, p)
		}
	}
	sort.Strings(live)
	for k := 0; len(live) > 0; k++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(2+rng.Intn(20)) * time.Millisecond):
		}
		i := rng.Intn(len(live))
		p := live[i]
		full := filepath.Join(root, filepath.FromSlash(p))
		if rng.Intn(40) == 0 && len(live) > seeds/2 {
			if os.Remove(full) == nil {
				files[p].deleted = true
				res.EditorDeletes++
				live = append(live[:i], live[i+1:]...)
			}
			continue
		}
		b, err := os.ReadFile(full)
		if err != nil {
			continue
		}
		marker := fmt.Sprintf("E-r%d-k%d", round, k)
		read := bytes.Clone(b)
		b = append(bytes.TrimRight(b, "\n"), []byte("\n"+marker+"\n")...)
		if !res.save(rng, full, read, b, marker) {
			continue
		}
		files[p].markers = append(files[p].markers, marker)
		res.EditorSaves++
	}
}

// save writes b, the file's new text, as the editor saves: a temporary
// file renamed over it, or in place: truncated, then written in two
// writes (a reader between them finds it half written), or, half the
// time, the marker's line appended. read is what the editor read: as
// editors do (VS Code compares the file's time), it does not save over a
// file changed on disk since, which would lose that change by the
// editor's doing, not the engine's; the check leaves microseconds open.
func (res *result) save(rng *rand.Rand, full string, read, b []byte, marker string) bool {
	unchanged := func() bool {
		now, err := os.ReadFile(full)
		if err != nil || !bytes.Equal(now, read) {
			res.EditorStale++
			return false
		}
		return true
	}
	if !res.InPlace {
		tmp := filepath.Join(filepath.Dir(full), fmt.Sprintf(".%s.swp", filepath.Base(full)))
		if os.WriteFile(tmp, b, 0o644) != nil {
			return false
		}
		if !unchanged() {
			os.Remove(tmp)
			return false
		}
		return os.Rename(tmp, full) == nil
	}
	if rng.Intn(2) == 0 {
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return false
		}
		_, err = f.Write([]byte(marker + "\n"))
		return f.Close() == nil && err == nil
	}
	if !unchanged() {
		return false
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return false
	}
	half := len(b) / 2
	_, err1 := f.Write(b[:half])
	_, err2 := f.Write(b[half:])
	return f.Close() == nil && err1 == nil && err2 == nil
}

// audited reads every audit log of the root: reason → status of the
// lines with that reason.
func audited(root string) (map[string][]string, map[string]map[string]bool, error) {
	byReason := map[string][]string{}
	pathsByReason := map[string]map[string]bool{}
	logs, _ := filepath.Glob(filepath.Join(root, ".arbor", "audit*.jsonl"))
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l struct{ Op, Path, Reason, Status, Message string }
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue // a torn last line
			}
			byReason[l.Reason] = append(byReason[l.Reason], l.Status+": "+l.Message)
			if pathsByReason[l.Reason] == nil {
				pathsByReason[l.Reason] = map[string]bool{}
			}
			pathsByReason[l.Reason][l.Path] = true
		}
		f.Close()
	}
	return byReason, pathsByReason, nil
}

// check opens the root as the next command would (recording what a kill
// left in the journal, removing temporary files) and checks the tree.
func (res *result) check(bin, root string, files map[string]*editorFile, sent []op) error {
	out, _ := exec.Command(bin, "--root", root, "doctor", "--fix", "--json").Output()
	var rep struct {
		Checks []struct {
			Name, Status, Detail string
			Items                []string
		} `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return fmt.Errorf("doctor --json: %v\n%s", err, out)
	}
	torn := 0
	for _, c := range rep.Checks {
		switch c.Name {
		case "files":
			for _, it := range c.Items {
				res.problem("torn: %s", it)
				torn++
			}
		case "leftovers":
			res.Leftovers += len(c.Items)
		}
	}
	res.Torn += torn
	// The editor's saves.
	for p, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case f.deleted && err == nil:
			res.Resurrected++
			res.problem("resurrected: %s", p)
			f.deleted = false // counted once; it is the editor's again
			f.markers = nil
		case f.deleted:
		case err != nil:
			res.Lost++
			res.problem("lost: %s is gone: %v", p, err)
			f.deleted = true
		default:
			if !bytes.Contains(b, []byte(f.own)) {
				res.Lost++
				res.problem("lost: %s lacks its own sentence %q", p, f.own)
			}
			kept := f.markers[:0]
			for _, m := range f.markers {
				// The editor's line may have become part of the text
				// around it (a line right after a list item continues
				// it, in markdown): its words must be there. Each is
				// checked after every round, so that a later write that
				// drops it is caught too; a lost one is counted once.
				if !markerPattern(m).Match(b) {
					res.Lost++
					res.problem("lost: %s lacks the editor's %s", p, m)
					continue
				}
				kept = append(kept, m)
			}
			f.markers = kept
		}
	}
	// The writers' operations.
	byReason, paths, err := audited(root)
	if err != nil {
		return err
	}
	tree := markdownFiles(root)
	res.OpsApplied, res.Conflicts, res.Recovered = 0, 0, 0
	for _, lines := range byReason {
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "success"):
				res.OpsApplied++
			case strings.HasPrefix(l, "conflict"):
				res.Conflicts++
			}
			// Written by the next process to open the root (a writer, or
			// doctor), from the journal a kill left.
			if strings.Contains(l, "the process stopped") {
				res.Recovered++
			}
		}
	}
	for i := range sent {
		o := &sent[i]
		if o.marker == "" {
			continue // checked in an earlier round
		}
		onDisk := ""
		marker := markerPattern(o.marker)
		for p, text := range tree {
			if marker.MatchString(text) && (o.path == "" || p == o.path || p == o.alt) {
				onDisk = p
				break
			}
		}
		lines := byReason[o.reason]
		applied := false
		for _, l := range lines {
			if strings.HasPrefix(l, "success") {
				applied = true
			}
		}
		if onDisk != "" && onDisk == o.alt {
			res.Moves.UpdatesMoved++
		}
		if o.kind == "ADD" && onDisk != "" && applied {
			res.Notes.learn(onDisk, o.marker)
		}
		switch {
		case onDisk != "" && len(lines) == 0:
			res.AuditMissing++
			res.problem("audit-missing: %s %s (%s) is in %s", o.kind, o.path, o.reason, onDisk)
		case onDisk != "" && !paths[o.reason][onDisk] && !(onDisk == o.alt && paths[o.reason][o.path]):
			res.AuditMissing++
			res.problem("audit-missing: the %s %s is in %s, which no line of %q names", o.kind, o.marker, onDisk, o.reason)
		case onDisk == "" && applied && o.kind != "INGEST" && !deletedByEditor(files, o.path):
			res.Lost++
			res.problem("lost: %s %s (%s) is in the audit log as applied but not in the files", o.kind, o.path, o.reason)
		}
		o.marker = ""
	}
	res.Notes.check(res, byReason, tree)
	return res.Moves.check(res, root, byReason, tree)
}

// markerPattern finds the marker m as a word: M-w0-r1-op1 is not in
// M-w0-r1-op12.
func markerPattern(m string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(m) + `\b`)
}

func deletedByEditor(files map[string]*editorFile, p string) bool {
	f, ok := files[p]
	return ok && f.deleted
}

// markdownFiles reads every markdown file of the tree.
func markdownFiles(root string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.HasPrefix(d.Name(), ".") {
			if b, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(root, p)
				out[filepath.ToSlash(rel)] = string(b)
			}
		}
		return nil
	})
	return out
}

func (r *result) markdown(n int, seed int64, editor string) string {
	var b strings.Builder
	how := "temporary file, then rename"
	if r.InPlace {
		how = "in place: truncated and written in two writes, or appended to"
	}
	title := "SIGKILL during curate (MERGEs included), add, ingest and folder MOVEs"
	if r.InPlace {
		title += ", an editor saving in place"
	}
	fmt.Fprintf(&b, "# Fault injection: %s\n\n", title)
	fmt.Fprintf(&b, "`go run ./tests/faults -n %d -seed %d -editor %s` (%s, %s). Each round starts two writers on one root (a\n", n, seed, editor, r.Elapsed.Round(time.Second), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "curate batch of ADDs, UPDATEs and MERGEs of notes, an `arbor add`, an `arbor ingest`, or a folder MOVE) while an editor saves and\n")
	fmt.Fprintf(&b, "deletes seed entries (%s), kills one writer with SIGKILL after 0–1500 ms\n", how)
	fmt.Fprintf(&b, "(a MOVE, half the time, within 8 ms of its journal's appearing) and the other half the time,\n")
	fmt.Fprintf(&b, "then opens the root (`arbor doctor --fix --json`) and checks. The MOVE carries a topic of 6\n")
	fmt.Fprintf(&b, "entries (linked into, out of and within it), 4 attachments, a 150 MiB sparse file and a subtopic\n")
	fmt.Fprintf(&b, "between %s and %s.\n\n", movePlaces[0], movePlaces[1])
	fmt.Fprintf(&b, "| what | count |\n| --- | ---: |\n")
	m := r.Moves
	rows := []struct {
		k string
		v int
	}{
		{"rounds", r.Rounds}, {"writer processes", r.Processes}, {"SIGKILLs delivered (to a process still running)", r.Kills},
		{"operations sent (ADD, UPDATE, ingested sections)", r.OpsSent}, {"operations applied (audit `success`)", r.OpsApplied},
		{"conflicts (an editor's save met an agent's update)", r.Conflicts},
		{"editor saves", r.EditorSaves}, {"editor saves given up (the file changed on disk since the editor read it)", r.EditorStale}, {"editor deletions", r.EditorDeletes},
		{"interrupted operations recorded at the next open", r.Recovered}, {"temporary files left by kills, removed by `doctor --fix`", r.Leftovers},
		{"UPDATEs of the moved folder's entries sent", m.Updates},
		{"of them found applied at the entry's other place (moved after the UPDATE)", m.UpdatesMoved},
		{"folder MOVEs sent", m.Sent}, {"folder MOVEs applied (the folder whole at its new place, audit `success`)", m.Applied},
		{"folder MOVEs that moved nothing (killed before, or failed: the other writer moved it first, a conflict)", m.Failed},
		{"of them a conflict (a file it would rewrite changed on disk while it ran)", m.Conflicts},
		{"folder MOVEs interrupted (the folder split, recorded as interrupted; finished by hand)", m.Interrupted},
		{"files an interrupted MOVE left at both places (entries it edits)", m.LeftAtBoth},
		{"links an interrupted MOVE left naming no file (pointed by hand)", m.Dangling},
		{"MERGEs of agents' notes sent", r.Notes.Sent}, {"of them applied (audit `success`, the source gone, its markers in the target)", r.Notes.Applied},
		{"of them not applied (killed before, or failed)", r.Notes.NotApplied}, {"ADDs linking to an earlier note (a MERGE rewrites such links)", r.Notes.Linked},
		{"**lost**", r.Lost}, {"**torn**", r.Torn}, {"**resurrected**", r.Resurrected}, {"**audit-missing**", r.AuditMissing},
		{"**duplicated** (a file a MOVE carried unedited at both places)", m.Duplicated},
		{"**copied** (the sparse file written out: a MOVE copied it, not renamed)", m.Copied},
		{"**diverged** (an entry at both places, the old copy holding what the new lacks)", m.Diverged},
		{"**links naming no file** (after a whole MOVE)", m.LinksBroken},
	}
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %d |\n", row.k, row.v)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, "\nProblems (first %d):\n\n", len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}
