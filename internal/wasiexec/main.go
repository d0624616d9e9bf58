// Command wasiexec runs a wasip1 test binary under wazero, for `go test
// -exec`: packages whose code behaves differently as a WebAssembly module
// (core/internal/gcpause) run their tests where that code runs. Not Go's
// go_wasip1_wasm_exec, which needs a runtime's command-line tool installed;
// wazero is the project's own.
//
//	GOOS=wasip1 GOARCH=wasm go test -exec "go run ./internal/wasiexec" ./core/internal/gcpause
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wasiexec MODULE [ARGS...]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		var exit *sys.ExitError
		if errors.As(err, &exit) {
			os.Exit(int(exit.ExitCode()))
		}
		fmt.Fprintln(os.Stderr, "wasiexec:", err)
		os.Exit(1)
	}
}

// run instantiates the command module at path with args, the process's
// output and clocks; it has no files.
func run(path string, args []string) error {
	ctx := context.Background()
	bin, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	cfg := wazero.NewModuleConfig().WithArgs(append([]string{path}, args...)...).
		WithStdout(os.Stdout).WithStderr(os.Stderr).WithSysWalltime().WithSysNanotime()
	_, err = r.InstantiateWithConfig(ctx, bin, cfg)
	return err
}
