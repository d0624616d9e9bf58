package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/host/serve"
)

// rootMarker is the folder that makes a folder a memory root.
const rootMarker = api.StateDir

// findRoot returns the memory root: --root, else $ARBOR_ROOT, else the
// nearest folder at or above the current one that holds .arbor/ (as git
// finds .git). An explicit root need not hold .arbor/: an existing tree
// (a ByteRover or Obsidian folder) opens as it is.
func (a *app) findRoot() (string, error) {
	explicit, from := a.root, "--root"
	if explicit == "" {
		explicit, from = os.Getenv("ARBOR_ROOT"), "ARBOR_ROOT"
	}
	if explicit != "" {
		dir, err := filepath.Abs(explicit)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", from, explicit, err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", from, explicit, err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s %s: not a folder", from, explicit)
		}
		return dir, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the memory root: %w", err)
	}
	for dir := cwd; ; {
		if fi, err := os.Stat(filepath.Join(dir, rootMarker)); err == nil && fi.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("not inside an Arbor memory root (no %s/ folder in %s or above): run 'arbor init' there, or pass --root DIR", rootMarker, cwd)
}

// open finds the root, starts the engine on it with opts and opens it.
func (a *app) open(opts ...runtime.Option) (*runtime.Engine, error) {
	root, err := a.findRoot()
	if err != nil {
		return nil, err
	}
	opts = append([]runtime.Option{runtime.WithStderr(a.stderr)}, opts...)
	em, err := a.embedder(root)
	if err != nil {
		return nil, err
	}
	if em != nil {
		opts = append(opts, runtime.WithEmbedder(em))
	}
	// A cold build of a big tree, or a big write, shows its progress on a
	// terminal; a pipe or --json gets none.
	prog := &phaseProgress{w: a.stderr}
	if !a.json && isTerminal(a.stderr) {
		opts = append(opts, runtime.WithProgress(prog.show))
	}
	eng, err := runtime.New(a.ctx, root, opts...)
	if err != nil {
		return nil, err
	}
	_, err = a.openEngine(eng)
	prog.clear() // reading the tree has no last report
	if err != nil {
		eng.Close(a.ctx)
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	return eng, nil
}

// engine is what a command needs of the engine: one this process runs
// (*runtime.Engine), or the one `arbor serve` keeps open for the root
// (*serve.Client).
type engine interface {
	runtime.MethodCaller
	Root() string
}

// withEngine runs f on the engine of the `arbor serve` that answers for
// the root, when one does, else on one opened here.
func (a *app) withEngine(f func(eng engine) error) error {
	if c := a.server(); c != nil {
		defer c.Close()
		return f(c)
	}
	return a.withDirect(func(eng *runtime.Engine) error { return f(eng) })
}

// server connects to the `arbor serve` of the root, when one runs for it
// with this build's engine and clock: nil when none does, or when
// $ARBOR_NO_SERVE is set (and not 0). Everything that keeps a server from
// being used falls back, silently, to opening the engine here; the root's
// own errors are reported by that path.
func (a *app) server() *serve.Client {
	if v := os.Getenv("ARBOR_NO_SERVE"); v != "" && v != "0" {
		return nil
	}
	root, err := a.findRoot()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // as the engine names it (host/arborhost)
	}
	c, err := serve.Dial(serve.Expect(root, a.fixedTime))
	if err != nil {
		return nil
	}
	return c
}

// withDirect runs f on an engine opened here with opts and closes it,
// reporting the first error.
func (a *app) withDirect(f func(eng *runtime.Engine) error, opts ...runtime.Option) error {
	eng, err := a.open(opts...)
	if err != nil {
		return err
	}
	err = f(eng)
	if cerr := eng.Close(a.ctx); cerr != nil && err == nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}
