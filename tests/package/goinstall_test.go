// Package packaging checks Arbor as users get it. pack.test.mjs installs the
// npm tarball; this file installs the CLI with `go install …@latest` from a
// release made by `./build.sh release` (docs/release.md).
package packaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

const modulePath = "github.com/arbormem/arbor"

// TestGoInstallLatest makes a release of the working tree in a throwaway
// repository, serves it from a module proxy laid out as proxy.golang.org
// serves a tag (a zip made by golang.org/x/mod/zip from the tag, as the go
// command makes them, plus list, .info and .mod), and installs the CLI in an
// empty folder with a fresh GOBIN, the way the README says: `go install
// github.com/arbormem/arbor/host/cmd/arbor@latest`. The binary must name the
// release and keep a memory. Dependencies come from the machine's GOPROXY
// through the shared module and build caches, so only Arbor's own packages
// are compiled.
func TestGoInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a release and installs it")
	}
	for _, tool := range []string{"git", "bash", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: ./build.sh release needs it", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if top, err := output(t, root, nil, "git", "rev-parse", "--show-toplevel"); err != nil || filepath.Clean(top) != root {
		t.Skipf("%s is not a git checkout (%v): the release is made from one", root, err)
	}
	var pkg struct{ Version string }
	if err := readJSON(filepath.Join(root, "package.json"), &pkg); err != nil {
		t.Fatal(err)
	}

	// The working tree as it is, tracked and new files alike, committed in
	// a repository of its own: the release of what is being tested, and
	// the checkout's own repository is left alone.
	repo := filepath.Join(t.TempDir(), "arbor")
	copyWorkingTree(t, root, repo)
	git := gitEnv(t)
	mustRun(t, repo, git, "git", "init", "-q", "-b", "main")
	mustRun(t, repo, git, "git", "add", "-A")
	mustRun(t, repo, git, "git", "commit", "-q", "-m", "the tree under test")
	base := mustRun(t, repo, git, "git", "rev-parse", "HEAD")

	// What a release refuses, before it builds anything: each leaves the
	// repository as it was.
	if err := os.WriteFile(filepath.Join(repo, "stray.txt"), []byte("not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, repo, git, "v"+pkg.Version, "the working tree has changes")
	if err := os.Remove(filepath.Join(repo, "stray.txt")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ version, want string }{
		{"", "give one version"},
		{pkg.Version, "give one version"},
		{"v0.1", "give one version"},
		{"v" + pkg.Version + "+build.5", "give one version"},
		{"v" + pkg.Version + "-rc.01", "give one version"},
		{"v" + bumpMinor(t, pkg.Version), "which package.json and core/api.Version say"},
		{"v2.0.0", "needs the module path " + modulePath + "/v2"},
	} {
		refused(t, repo, git, c.version, c.want)
	}
	if tags := mustRun(t, repo, git, "git", "tag", "--list"); tags != "" {
		t.Fatalf("a refused release left tags: %s", tags)
	}

	// A version of its own for each run: the module cache is shared with
	// the machine (and with other runs at the same time), and it keeps a
	// version's zip for good once it has one.
	version := fmt.Sprintf("v%s-releasetest.%d", pkg.Version, time.Now().UnixNano())
	modCache := strings.TrimSpace(mustRun(t, root, nil, "go", "env", "GOMODCACHE"))
	t.Cleanup(func() { forgetModule(t, modCache, version) })
	out := mustRun(t, repo, git, "./build.sh", "release", version)
	if !strings.Contains(out, "git push origin "+version) {
		t.Errorf("release does not say what to push:\n%s", out)
	}
	if head := mustRun(t, repo, git, "git", "rev-parse", "main"); head != base {
		t.Errorf("the release moved main from %s to %s", base, head)
	}
	if kind := mustRun(t, repo, git, "git", "cat-file", "-t", version); kind != "tag" {
		t.Errorf("%s is a %s, not an annotated tag", version, kind)
	}
	if parent := mustRun(t, repo, git, "git", "rev-parse", version+"^{commit}^"); parent != base {
		t.Errorf("the release commit's parent is %s, not HEAD %s", parent, base)
	}
	if diff := mustRun(t, repo, git, "git", "diff", "--name-status", base, version); diff != "A\thost/runtime/arbor.wasm" {
		t.Errorf("the release commit changes %q; want only host/runtime/arbor.wasm added", diff)
	}
	built := mustRun(t, repo, git, "git", "hash-object", "host/runtime/arbor.wasm")
	if tagged := mustRun(t, repo, git, "git", "rev-parse", version+":host/runtime/arbor.wasm"); tagged != built {
		t.Errorf("the tag holds module %s, the build made %s", tagged, built)
	}
	if st := mustRun(t, repo, git, "git", "status", "--porcelain"); st != "" {
		t.Errorf("the release left the working tree changed:\n%s", st)
	}
	refused(t, repo, git, version, "exists already")

	proxy := t.TempDir()
	serveRelease(t, proxy, repo, version)

	// A user's machine: an empty folder, a GOBIN of its own, Arbor from the
	// proxy and everything else from where it always comes.
	work, gobin, cache := t.TempDir(), t.TempDir(), t.TempDir()
	upstream := strings.TrimSpace(mustRun(t, root, nil, "go", "env", "GOPROXY"))
	env := []string{
		"GOBIN=" + gobin,
		"GOFLAGS=-mod=mod",
		"GOPROXY=file://" + filepath.ToSlash(proxy) + "," + upstream,
		"GONOSUMDB=" + modulePath,
	}
	mustRun(t, work, env, "go", "install", modulePath+"/host/cmd/arbor@latest")
	arbor := filepath.Join(gobin, "arbor")

	// The engine compiles its module once per user; this user starts cold.
	run := []string{"HOME=" + work, "XDG_CACHE_HOME=" + cache, "XDG_CONFIG_HOME=" + filepath.Join(work, ".config"), "ARBOR_ROOT="}
	if got := mustRun(t, work, run, arbor, "--version"); !strings.HasPrefix(got, "arbor "+version+" (ABI ") {
		t.Errorf("--version says %q, not the release %s", got, version)
	}
	var v struct{ Version, Module string }
	if err := json.Unmarshal([]byte(mustRun(t, work, run, arbor, "--json", "--version")), &v); err != nil || v.Version != pkg.Version || v.Module != version {
		t.Errorf("--json --version: %+v (%v); want version %s, module %s", v, err, pkg.Version, version)
	}
	notes := filepath.Join(work, "notes")
	mustRun(t, work, run, arbor, "init", notes)
	mustRun(t, work, run, arbor, "--root", notes, "add", "--path", "engineering/billing", "--title", "Invoice retry policy",
		"--narrative", "Failed invoices are retried three times, then escalated.", "--reason", "billing sync")
	var q struct {
		TierName string
		Results  []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, work, run, arbor, "--root", notes, "query", "--json", "how often are failed invoices retried?")), &q); err != nil {
		t.Fatal(err)
	}
	if q.TierName != "direct" || len(q.Results) == 0 || q.Results[0].Path != "engineering/billing/invoice_retry_policy.md" {
		t.Errorf("query answered %+v", q)
	}
}

// refused runs a release that must fail, saying want, and change nothing.
func refused(t *testing.T, repo string, env []string, version, want string) {
	t.Helper()
	before := mustRun(t, repo, env, "git", "show-ref")
	args := []string{"release"}
	if version != "" {
		args = append(args, version)
	}
	out, err := output(t, repo, env, "./build.sh", args...)
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("release %q: %v, %q; want a refusal saying %q", version, err, out, want)
	}
	if after := mustRun(t, repo, env, "git", "show-ref"); after != before {
		t.Errorf("release %q changed the refs:\n%s\nto\n%s", version, before, after)
	}
}

// serveRelease writes the proxy files of module version (the GOPROXY
// protocol: `go help goproxy`) from the tag in repo.
func serveRelease(t *testing.T, proxy, repo, version string) {
	t.Helper()
	dir := filepath.Join(proxy, modulePath, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := zip.CreateFromVCS(f, module.Version{Path: modulePath, Version: version}, repo, version, ""); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := exec.Command("git", "-C", repo, "cat-file", "blob", version+":go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	when := mustRun(t, repo, nil, "git", "log", "-1", "--format=%cI", version)
	stamp, err := time.Parse(time.RFC3339, when)
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, stamp.UTC()})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"list":            version + "\n",
		version + ".info": string(info),
		version + ".mod":  string(gomod),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// forgetModule removes version of the module from the shared module cache:
// nobody else will ask for it, and its files are read-only.
func forgetModule(t *testing.T, modCache, version string) {
	extracted := filepath.Join(modCache, modulePath+"@"+version)
	_ = filepath.WalkDir(extracted, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	})
	if err := os.RemoveAll(extracted); err != nil {
		t.Errorf("module cache: %v", err)
	}
	dir := filepath.Join(modCache, "cache", "download", modulePath, "@v")
	downloads, _ := filepath.Glob(filepath.Join(dir, version+".*"))
	for _, p := range downloads {
		if err := os.Remove(p); err != nil {
			t.Errorf("module cache: %v", err)
		}
	}
	// The go command writes the list from the .mod files it finds at each
	// download; until the next one, it would still name this version.
	list := filepath.Join(dir, "list")
	if b, err := os.ReadFile(list); err == nil {
		kept := slices.DeleteFunc(strings.SplitAfter(string(b), "\n"), func(l string) bool { return strings.TrimSpace(l) == version })
		if err := os.WriteFile(list, []byte(strings.Join(kept, "")), 0o644); err != nil {
			t.Errorf("module cache: %v", err)
		}
	}
}

// copyWorkingTree copies the files git sees in root (tracked, and new ones
// it does not ignore; deleted ones are gone) to dst.
func copyWorkingTree(t *testing.T, root, dst string) {
	t.Helper()
	list := mustRun(t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, name := range strings.Split(strings.TrimRight(list, "\x00"), "\x00") {
		src := filepath.Join(root, filepath.FromSlash(name))
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err == nil {
				err = os.WriteFile(to, data, fi.Mode().Perm())
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// gitEnv keeps the throwaway repository's commits and tags from the
// user's git configuration (signing, hooks, templates) and gives them an
// author.
func gitEnv(t *testing.T) []string {
	return []string{
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Arbor release test", "GIT_AUTHOR_EMAIL=release-test@arbor.invalid",
		"GIT_COMMITTER_NAME=Arbor release test", "GIT_COMMITTER_EMAIL=release-test@arbor.invalid",
	}
}

// bumpMinor returns the version after v's minor version, which no release
// of this tree may take.
func bumpMinor(t *testing.T, v string) string {
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("package.json version %q: %v", v, err)
	}
	return fmt.Sprintf("%d.%d.0", major, minor+1)
}

func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// output runs a command in dir with env added to the process's, and returns
// its stdout and stderr together, trimmed.
func output(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// mustRun is output for a command that has to succeed.
func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := output(t, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}
