package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/mcp"
)

// Two processes adding the same entry at the same moment: the root's lock
// makes them take turns, so exactly one adds it and the other finds it
// there. Without the lock both reported "added" and one lost its text.
func TestTwoProcessesAddOnePath(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	must(t, "", "init", dir)
	const races = 20
	for i := 0; i < races; i++ {
		title := fmt.Sprintf("Race %d", i)
		var outs [2]bytes.Buffer
		var cmds [2]*exec.Cmd
		for w := range cmds {
			cmds[w] = exec.Command(bin, "--root", dir, "add", "--json", "--path", "engineering/races",
				"--title", title, "--narrative", fmt.Sprintf("written by writer %d", w), "--reason", "race")
			cmds[w].Stdout = &outs[w]
			if err := cmds[w].Start(); err != nil {
				t.Fatal(err)
			}
		}
		added, exists := 0, 0
		for w, cmd := range cmds {
			cmd.Wait() // exit 1 for the writer that finds the entry there
			var res struct {
				Applied []struct{ Status, Message string } `json:"applied"`
			}
			if err := json.Unmarshal(outs[w].Bytes(), &res); err != nil || len(res.Applied) != 1 {
				t.Fatalf("race %d, writer %d: %v\n%s", i, w, err, outs[w].String())
			}
			switch a := res.Applied[0]; {
			case a.Status == "success":
				added++
			case a.Status == "failed" && strings.Contains(a.Message, "already exists"):
				exists++
			default:
				t.Fatalf("race %d, writer %d: %+v", i, w, a)
			}
		}
		if added != 1 || exists != 1 {
			t.Fatalf("race %d: %d added, %d found it there; want 1 and 1", i, added, exists)
		}
	}
}

// Processes ingesting different sources into one root at the same time:
// each ingest reads and writes .arbor/ingest.json under the root's lock,
// so no run drops another's record (before the lock, the last writer's
// manifest won and the other source was ingested again next time).
func TestConcurrentIngestsKeepEveryRecord(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	must(t, "", "init", root)
	const writers, rounds = 3, 4
	for r := 0; r < rounds; r++ {
		var cmds []*exec.Cmd
		for w := 0; w < writers; w++ {
			src := filepath.Join(t.TempDir(), fmt.Sprintf("notes_%d_%d.md", r, w))
			writeFile(t, src, fmt.Sprintf("# Notes %d %d\n\n## Part one\n\nround %d, writer %d, first part.\n\n## Part two\n\nsecond part.\n", r, w, r, w))
			cmd := exec.Command(bin, "--root", root, "ingest", src)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
			t.Cleanup(func() {
				if t.Failed() {
					t.Log(errOut.String())
				}
			})
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d: ingest: %v", r, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(root, ".arbor", "ingest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var man struct {
			Sources map[string]json.RawMessage `json:"sources"`
		}
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if want := (r + 1) * writers; len(man.Sources) != want {
			names := make([]string, 0, len(man.Sources))
			for n := range man.Sources {
				names = append(names, n)
			}
			t.Fatalf("round %d: the manifest holds %d sources, want %d: %s", r, len(man.Sources), want, strings.Join(names, ", "))
		}
	}
}

// What a killed process leaves behind: doctor reports an operation the
// journal holds without its audit line (opening the root records it) and
// temporary files of interrupted writes, which --fix removes.
func TestDoctorAfterACrash(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	must(t, "", "--root", dir, "stats")
	writeFile(t, filepath.Join(dir, ".arbor", "journal.json"),
		`{"time":"2026-01-01T00:00:00Z","op":"ADD","path":"ops/oncall/rota.md","reason":"new","auditBytes":0,`+
			`"files":[{"path":"ops/oncall/rota.md","before":"","after":"1234"}]}`)
	leftover := []string{"engineering/billing/.arbor-tmp-12345", ".arbor/index/.arbor-tmp-1-2-manifest.json"}
	for _, p := range leftover {
		writeFile(t, filepath.Join(dir, p), "half a write")
	}
	var rep doctorReport
	r := arbor(t, "", "--root", dir, "doctor", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
	}
	checks := map[string]check{}
	for _, c := range rep.Checks {
		checks[c.Name] = c
	}
	if c := checks["journal"]; c.Status != checkWarn || len(c.Items) != 1 || !strings.Contains(c.Items[0], "ADD ops/oncall/rota.md") || !strings.Contains(c.Items[0], "not applied") {
		t.Errorf("journal check: %+v", c)
	}
	if c := checks["leftovers"]; c.Status != checkWarn || len(c.Items) != 2 {
		t.Errorf("leftovers check: %+v", c)
	}
	audit, _ := os.ReadFile(filepath.Join(dir, ".arbor", "audit.jsonl"))
	if !strings.Contains(string(audit), `"path":"ops/oncall/rota.md"`) || !strings.Contains(string(audit), "stopped before it changed anything") {
		t.Errorf("the interrupted operation is not in the audit log:\n%s", audit)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor", "journal.json")); !os.IsNotExist(err) {
		t.Errorf("journal left after it was recorded: %v", err)
	}

	out := must(t, "", "--root", dir, "doctor", "--fix")
	if !strings.Contains(out, "removed 2 temporary files") {
		t.Errorf("doctor --fix:\n%s", out)
	}
	for _, p := range leftover {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	out = must(t, "", "--root", dir, "doctor")
	if strings.Contains(out, "journal") || !strings.Contains(out, "no temporary files left") {
		t.Errorf("doctor after --fix:\n%s", out)
	}
}

// `arbor mcp` answers from the files as they are now: a person's edit in
// an editor and a file they delete are seen by the agent's next calls,
// without restarting the server.
func TestMCPSeesEditorChanges(t *testing.T) {
	root := examplesCopy(t)
	cs, _ := mcpClient(t, root)
	const p = "engineering/billing/invoice_retry_policy.md"
	full := filepath.Join(root, filepath.FromSlash(p))
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	var s api.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "zeppelin mooring"}, &s)
	if len(s.Results) != 0 {
		t.Fatalf("before the edit: %+v", s.Results)
	}
	edited := strings.Replace(string(b), "## Narrative\n", "## Narrative\nRetries pause while the zeppelin mooring is checked.\n", 1)
	if err := os.WriteFile(full, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edit", func() bool {
		callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "zeppelin mooring"}, &s)
		return len(s.Results) == 1 && s.Results[0].Path == p
	})
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removal", func() bool {
		callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "zeppelin mooring"}, &s)
		return len(s.Results) == 0
	})
}

// waitFor retries a check until it holds: the server's watcher hears of a
// change a few milliseconds after it is made. The deadline is for a
// loaded machine (CI runs every test package at once on two cores), where
// a server's start compiles the module if the cache is cold and these
// tests failed now and then at ten seconds; a check that holds returns at
// once.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hitPaths(s api.SearchResult) []string {
	var out []string
	for _, h := range s.Results {
		out = append(out, h.Path)
	}
	return out
}

// A long-lived `arbor mcp` keeps answering from the index it opened while
// other processes add entries and save the index (each a new manifest,
// segments numbered from the one it loaded); then every segment file is
// deleted under it. Its close rebuilds the index from the tree (inside the
// module, from its catalog) instead of saving a manifest that names files
// that are gone: the next process reuses that index whole.
func TestMCPAcrossOtherProcessesSaves(t *testing.T) {
	bin := binary(t)
	root := examplesCopy(t)
	must(t, "", "--root", root, "stats")
	cs, cmd := mcpClient(t, root)
	var before api.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "invoice retry"}, &before)
	if len(before.Results) == 0 {
		t.Fatal("no results before")
	}
	for i := range 3 {
		add := exec.Command(bin, "--root", root, "add", "--path", "travel/airships", "--title", fmt.Sprintf("Zeppelin mooring %d", i),
			"--narrative", fmt.Sprintf("Mooring mast number %d takes the zeppelin at dawn.", i), "--reason", "test")
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("add %d: %v\n%s", i, err, out)
		}
		var s api.SearchResult
		waitFor(t, fmt.Sprintf("entry %d", i), func() bool {
			callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "zeppelin mooring", "limit": 10}, &s)
			return len(s.Results) == i+1
		})
		// The new entries shift the scores a little (BM25's statistics),
		// not the order.
		callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "invoice retry"}, &s)
		if got, want := hitPaths(s), hitPaths(before); !slices.Equal(got, want) {
			t.Fatalf("after the save of process %d: %v, want %v", i, got, want)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(root, ".arbor", "index", "*.seg"))
	if len(segs) == 0 {
		t.Fatal("no segment files")
	}
	for _, p := range segs {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	var cur api.CurateResult
	callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "zoo/ledgers",
		"title": "Wombat ledger", "content": map[string]any{"narrative": "The wombat ledger is kept by the mcp process."}, "reason": "test"}}}, &cur)
	if len(cur.Applied) != 1 || cur.Applied[0].Status != "success" {
		t.Fatalf("curate: %+v", cur)
	}
	if err := cs.Close(); err != nil { // ends its input, and waits for it
		t.Fatal(err)
	}
	if st := cmd.ProcessState; st == nil || !st.Success() {
		t.Fatalf("arbor mcp: %v", st)
	}
	var rep doctorReport
	if out := must(t, "", "--root", root, "doctor", "--json"); json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("doctor --json:\n%s", out)
	}
	for _, c := range rep.Checks {
		if c.Name == "index" && (c.Status != checkOK || !strings.Contains(c.Detail, " 0 re-analyzed")) {
			t.Errorf("index after the mcp process closed: %+v; want the index it saved reused whole", c)
		}
	}
	for q, n := range map[string]int{"zeppelin mooring": 3, "wombat": 1} {
		var s api.SearchResult
		if err := json.Unmarshal([]byte(must(t, "", "--root", root, "--json", "search", q)), &s); err != nil || len(s.Results) != n {
			t.Errorf("search %q: %d results (%v), want %d", q, len(s.Results), err, n)
		}
	}
}

// Three writers on one entry, each from the state it holds: a long-lived
// `arbor mcp`, `arbor curate` processes and a person's editor, in turns,
// each adding to the entry (a fact, a sentence, a summary) as the others
// just did. Every write is in the file at the end: none replaced another
// it had not seen.
func TestWritersFromStaleStateKeepEachOthersWrites(t *testing.T) {
	root := examplesCopy(t)
	const p = "engineering/billing/invoice_retry_policy.md"
	full := filepath.Join(root, filepath.FromSlash(p))
	cs, _ := mcpClient(t, root)
	var s api.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "invoice retry"}, &s) // the server holds the tree
	fact := func(stmt string) map[string]any {
		return map[string]any{"type": "UPDATE", "path": p, "reason": "test", "content": map[string]any{"facts": []any{map[string]any{"statement": stmt}}}}
	}
	var want []string
	for i := range 3 {
		cli := fmt.Sprintf("The CLI's fact number %d.", i)
		b, _ := json.Marshal([]any{fact(cli)})
		must(t, string(b), "--root", root, "curate")
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		editor := fmt.Sprintf("A person's sentence number %d.", i)
		edited := strings.Replace(string(b), "## Narrative\n", "## Narrative\n"+editor+"\n", 1)
		if err := os.WriteFile(full, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		server := fmt.Sprintf("The MCP server's fact number %d.", i)
		var cur api.CurateResult
		callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": []any{fact(server)}}, &cur)
		if len(cur.Applied) != 1 || cur.Applied[0].Status != api.StatusSuccess {
			t.Fatalf("round %d: the server's update: %+v", i, cur.Applied)
		}
		want = append(want, cli, editor, server)
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(string(b), w) {
			t.Errorf("lost: %q\n%s", w, b)
		}
	}
}
