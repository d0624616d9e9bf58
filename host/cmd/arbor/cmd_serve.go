package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/host/serve"
)

var serveCommand = &command{
	name:    "serve",
	summary: "keep the engine open for the root, so that commands answer at once",
	help: "Opens the root's engine once and keeps it open, following the changes editors,\n" +
		"git and other processes make, on a Unix socket in .arbor/ that only this user\n" +
		"can reach. Every other command run on the root then sends its calls there\n" +
		"instead of starting the engine and opening the tree itself, and prints the same\n" +
		"output. When no server answers (none runs, it was killed, it is another build\n" +
		"of arbor), commands open the engine themselves as usual; ARBOR_NO_SERVE=1 makes\n" +
		"them do so always. Writes still take the root's lock, so other processes keep\n" +
		"working on the root. It runs in the foreground (append & or use a service\n" +
		"manager); --stop, SIGINT, SIGTERM or SIGHUP stop it after it has written the\n" +
		"lifecycle signals and the index. Linux, macOS and the BSDs only. The protocol\n" +
		"is in docs/cli.md.",
	example:  "arbor serve --root ~/notes &",
	examples: []string{"arbor serve --stop --root ~/notes"},
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		stop := fs.Bool("stop", false, "stop the server of the root and wait until it has written its state")
		every := fs.Duration("flush-every", 5*time.Minute, "while calls come, write lifecycle signals and the index this often `DURATION` (0: only when stopping)")
		return func(a *app, _ []string) error {
			if *every < 0 {
				return usageErr("serve: --flush-every must not be negative")
			}
			root, err := a.findRoot()
			if err != nil {
				return err
			}
			if real, err := filepath.EvalSymlinks(root); err == nil {
				root = real
			}
			if *stop {
				return a.stopServer(root)
			}
			claim, err := serve.NewClaim(root)
			if err != nil {
				return err
			}
			ctx, cancel := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer cancel()
			eng, err := a.open(runtime.WithWatch(0))
			if err != nil {
				claim.Release()
				return err
			}
			fmt.Fprintf(a.stderr, "arbor serve: serving %s on %s (process %d); arbor serve --stop, SIGINT or SIGTERM stops it\n", eng.Root(), claim.Socket(), os.Getpid())
			err = serve.Serve(ctx, claim, eng, serve.WithFixedTime(a.fixedTime), serve.WithFlushInterval(*every), serve.WithLog(a.stderr))
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stderr, "arbor serve: stopped")
			return nil
		}
	},
}

// stopServer asks the server of root to stop, whatever build it is, and
// waits until it has.
func (a *app) stopServer(root string) error {
	c, err := serve.Probe(root)
	switch {
	case errors.Is(err, serve.ErrNoServer), errors.Is(err, serve.ErrStale):
		return fmt.Errorf("serve --stop: no server runs for %s", root)
	case err != nil:
		return fmt.Errorf("serve --stop: %w", err)
	}
	defer c.Close()
	pid := c.Hello().PID
	if err := c.Stop(); err != nil {
		return fmt.Errorf("serve --stop: %w", err)
	}
	if a.json {
		return printJSON(a.stdout, mustJSON(map[string]any{"root": root, "stopped": true, "pid": pid}))
	}
	fmt.Fprintf(a.stdout, "stopped the server of %s (process %d)\n", root, pid)
	return nil
}
