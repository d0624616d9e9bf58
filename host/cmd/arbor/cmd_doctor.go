package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/host/serve"
)

var doctorCommand = &command{
	name:    "doctor",
	summary: "check the root, the index, the wasm cache and the LLM settings",
	help: "Checks what Arbor needs and says what is wrong: the memory root and how it was\n" +
		"found, .arbor/ and whether it is writable, the engine module and its compiled-code\n" +
		"cache (with the start-up time), the tree and the files that cannot be parsed, names\n" +
		"that differ only in case or Unicode form (one name on Windows and macOS), files\n" +
		"a sync left in conflict (a \"## Merge Conflict\" section; docs/sync.md), the\n" +
		"persisted index, the lifecycle state, the audit log, and the model that arbor\n" +
		"query would use (config files and environment; no key is printed, no call made).\n" +
		"It reports what a killed process left behind: an operation without its audit\n" +
		"line (opening the root records it) and temporary files (--fix removes them).\n" +
		"Opening the root brings its index up to date, as every command does. Exits 1\n" +
		"when a check fails.",
	example:  "arbor doctor",
	examples: []string{"arbor doctor --root ~/notes --json", "arbor doctor --fix"},
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		fix := fs.Bool("fix", false, "remove the temporary files that interrupted writes left behind")
		return func(a *app, _ []string) error {
			rep := a.diagnose(*fix)
			if a.json {
				if err := printJSON(a.stdout, mustJSON(rep)); err != nil {
					return err
				}
			} else {
				printDoctor(a.stdout, a.p, rep)
			}
			if !rep.OK {
				return errors.New("doctor: a check failed")
			}
			return nil
		}
	},
}

// Check statuses.
const (
	checkOK   = "ok"
	checkInfo = "info" // nothing wrong, worth knowing
	checkWarn = "warn" // works, but not as well as it could
	checkFail = "fail" // Arbor cannot work until it is fixed
)

type check struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Detail string   `json:"detail"`
	Items  []string `json:"items,omitempty"`
}

type doctorReport struct {
	Root       string  `json:"root,omitempty"`
	Version    string  `json:"version"`
	ABIVersion int     `json:"abiVersion"`
	GoVersion  string  `json:"goVersion"`
	Checks     []check `json:"checks"`
	OK         bool    `json:"ok"`
}

func (r *doctorReport) add(name, status, detail string, items ...string) {
	r.put(check{name, status, detail, items})
}

func (r *doctorReport) put(c check) {
	r.Checks = append(r.Checks, c)
	if c.Status == checkFail {
		r.OK = false
	}
}

// diagnose runs the checks in order; a failed root stops the ones that
// need it.
func (a *app) diagnose(fix bool) doctorReport {
	rep := doctorReport{Version: api.Version, ABIVersion: runtime.ABIVersion, GoVersion: goruntime.Version(), OK: true}
	root, err := a.findRoot()
	if err != nil {
		rep.add("root", checkFail, err.Error())
		rep.put(llmCheck(""))
		return rep
	}
	rep.Root = root
	from := "the nearest folder above the current one with .arbor/"
	switch {
	case a.root != "":
		from = "--root"
	case os.Getenv("ARBOR_ROOT") != "":
		from = "ARBOR_ROOT"
	}
	rep.add("root", checkOK, fmt.Sprintf("%s (from %s)", root, from))

	marker := filepath.Join(root, rootMarker)
	if fi, err := os.Stat(marker); err != nil || !fi.IsDir() {
		rep.add(rootMarker, checkWarn, "missing: the tree opens as it is, but run 'arbor init' so that commands run below it find it")
	} else if f, err := os.CreateTemp(marker, ".doctor-*"); err != nil {
		rep.add(rootMarker, checkFail, fmt.Sprintf("not writable: the index, state and audit log cannot be saved: %v", err))
	} else {
		f.Close()
		os.Remove(f.Name())
		rep.add(rootMarker, checkOK, "present and writable")
	}

	if c, ok := lockCheck(root); ok {
		rep.put(c)
	}
	rep.put(a.serverCheck(root))
	// What the engine will find, read before it opens and repairs it.
	_, manifestErr := os.Stat(filepath.Join(marker, "index", "manifest.bin"))
	_, journalErr := os.Stat(filepath.Join(root, filepath.FromSlash(api.JournalFile)))
	stateCheck := checkState(filepath.Join(marker, "state.json"))

	cacheDir := runtime.DefaultCacheDir()
	start := time.Now()
	eng, err := runtime.New(a.ctx, root, runtime.WithStderr(a.stderr))
	if err != nil {
		rep.add("engine", checkFail, err.Error())
		rep.put(llmCheck(root))
		return rep
	}
	defer eng.Close(a.ctx)
	started := time.Since(start)
	cache := folderSize(cacheDir)
	if cacheDir == "" {
		rep.add("engine", checkWarn, fmt.Sprintf("started in %s; no user cache folder, so the module is compiled at every start", ms(float64(started.Microseconds())/1000)))
	} else {
		rep.add("engine", checkOK, fmt.Sprintf("ABI %d, started in %s; compiled code cached in %s (%s)", runtime.ABIVersion, ms(float64(started.Microseconds())/1000), cacheDir, cache))
	}

	open, err := a.openEngine(eng)
	if err != nil {
		rep.add("tree", checkFail, err.Error())
		rep.put(llmCheck(root))
		return rep
	}
	rep.add("tree", checkOK, fmt.Sprintf("%d entries, %d context files", open.Entries, open.Contexts))
	var unusable, twins, conflicts []string
	recovered := ""
	for _, w := range open.Warnings {
		switch w.Kind {
		case api.WarnTwins:
			twins = append(twins, strings.Join(w.Paths, " · "))
		case api.WarnConflict:
			conflicts = append(conflicts, w.Path)
		case api.WarnInterrupted:
			recovered = w.Message
		default:
			unusable = append(unusable, w.Path+": "+w.Message)
		}
	}
	if n := len(unusable); n > 0 {
		rep.add("files", checkWarn, fmt.Sprintf("%d files could not be used; they are left as they are", n), unusable...)
	}
	if n := len(conflicts); n > 0 {
		rep.add("conflicts", checkWarn, fmt.Sprintf("%d files hold both versions of what a sync could not merge, in a \"## Merge Conflict\" section: resolve each with an UPDATE of the entry (arbor curate), or edit the file and delete the section (docs/sync.md)", n), conflicts...)
	}
	if n := len(twins); n > 0 {
		rep.add("twins", checkWarn, fmt.Sprintf("%d groups of names differ only in case or Unicode form: Windows and macOS hold one name of each, so a copy there loses the others; rename or merge them", n), twins...)
	}
	// Upkeep is worth knowing, never wrong: the status counts what needs
	// no entry read (stale entries, crowded topics), as cheap as a scan.
	if st, err := eng.Status(a.ctx); err == nil && st.Upkeep > 0 {
		rep.add("upkeep", checkInfo, fmt.Sprintf("%s pending (stale entries to archive, crowded topics): 'arbor tidy' shows the plan, and finds near-duplicates and oversized entries too", plural(st.Upkeep, "suggestion", "suggestions")))
	}

	ix := open.Index
	switch {
	case manifestErr != nil:
		rep.add("index", checkInfo, fmt.Sprintf("none persisted yet: built from the tree (%d documents), written when this command closes", ix.Indexed))
	case ix.Reused == 0 && ix.Indexed > 0:
		rep.add("index", checkWarn, fmt.Sprintf("the persisted index could not be used and was rebuilt (%d documents); see the warning above", ix.Indexed))
	default:
		rep.add("index", checkOK, fmt.Sprintf("%d documents reused, %d re-analyzed, %d removed; %s on disk", ix.Reused, ix.Indexed, ix.Removed, measureDisk(root).Index))
	}
	rep.put(stateCheck)
	d := measureDisk(root)
	if d.Audit.Files == 0 {
		rep.add("audit", checkInfo, "no operations recorded yet")
	} else {
		rep.add("audit", checkOK, fmt.Sprintf("%d operations recorded (%s)", d.AuditLines, bytesHuman(d.Audit.Bytes)))
	}
	if c, ok := journalCheck(journalErr == nil, recovered); ok {
		rep.put(c)
	}
	rep.put(linkCheck(root))
	if c, ok := watchCheck(root); ok {
		rep.put(c)
	}
	rep.put(leftoverCheck(a.ctx, root, fix))
	rep.put(llmCheck(root))
	return rep
}

// checkState reads .arbor/state.json as the engine will.
func checkState(name string) check {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return check{Name: "state", Status: checkInfo, Detail: "no lifecycle signals recorded yet"}
	}
	if err != nil {
		return check{Name: "state", Status: checkFail, Detail: err.Error()}
	}
	var st struct {
		Version int                        `json:"version"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Version != 1 {
		return check{Name: "state", Status: checkWarn, Detail: "state.json is unreadable or of another version: the engine keeps it as state.corrupt.json and starts fresh"}
	}
	return check{Name: "state", Status: checkOK, Detail: fmt.Sprintf("lifecycle signals for %d entries", len(st.Entries))}
}

// llmCheck says what "arbor query" would use as its model, read the way
// it reads it (config files, then the environment), with the key named by
// where it came from, never shown. It calls nothing.
func llmCheck(root string) check {
	cfg, err := hostllm.Load(root)
	switch {
	case errors.Is(err, hostllm.ErrNotConfigured):
		return check{Name: "llm", Status: checkInfo, Detail: "not configured: queries answer from tiers 0–2, and arbor mcp needs none (the agent is the model)"}
	case err != nil:
		return check{Name: "llm", Status: checkFail, Detail: fmt.Sprintf("the configuration cannot be read, so arbor query and curate --from stop: %v", err)}
	}
	return check{Name: "llm", Status: checkOK, Detail: cfg.String() + " (not tried: doctor calls no model)"}
}

func fileExists(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

func printDoctor(w io.Writer, p palette, rep doctorReport) {
	marks := map[string]string{checkOK: p.green("✓"), checkInfo: p.cyan("·"), checkWarn: p.yellow("!"), checkFail: p.red("✗")}
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "%s %s  %s\n", marks[c.Status], p.bold(fmt.Sprintf("%-*s", width, c.Name)), c.Detail)
		for _, item := range c.Items {
			fmt.Fprintf(w, "    %s\n", p.dim(item))
		}
	}
	if rep.OK {
		fmt.Fprintln(w, p.green("no problems found"))
	}
}

// serverCheck says whether an `arbor serve` answers for root and whether
// commands use it.
func (a *app) serverCheck(root string) check {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	c, err := serve.Dial(serve.Expect(root, a.fixedTime))
	var mis *serve.MismatchError
	switch {
	case err == nil:
		defer c.Close()
		h := c.Hello()
		socket, _ := serve.Paths(root)
		return check{Name: "server", Status: checkOK, Detail: fmt.Sprintf("process %d serves this root on %s since %s (%d calls): commands use it", h.PID, socket, h.Since, h.Calls)}
	case errors.Is(err, serve.ErrUnsupported):
		return check{Name: "server", Status: checkInfo, Detail: "arbor serve does not run on this system: each command opens the engine itself"}
	case errors.Is(err, serve.ErrNoServer):
		return check{Name: "server", Status: checkInfo, Detail: "none: each command opens the engine itself (arbor serve keeps one open)"}
	case errors.Is(err, serve.ErrStale):
		return check{Name: "server", Status: checkInfo, Detail: "none: its socket was left by a server that was killed, and the next arbor serve replaces it; each command opens the engine itself"}
	case errors.As(err, &mis):
		return check{Name: "server", Status: checkWarn, Detail: fmt.Sprintf("process %d serves this root, but %s: commands open the engine themselves; restart it (arbor serve --stop, then arbor serve)", mis.Server.PID, mis.Why)}
	}
	return check{Name: "server", Status: checkWarn, Detail: fmt.Sprintf("not used: %v", err)}
}
