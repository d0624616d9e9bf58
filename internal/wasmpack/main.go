// Command wasmpack rewrites the data section of a Go wasm module with fewer,
// larger segments. The Go linker starts a new segment at every run of 8 or
// more zero bytes, up to 100,000 segments (the module holds exactly that
// many), and a runtime decodes and copies each one at every start: in the
// arbor CLI they were about a tenth of the processor time of a command on an
// empty memory (bench/wasm/REPORT.md). Writing the zeros of gaps under
// -gap bytes instead leaves a handful of segments; the module grows by those
// zeros (about 1 MB) but compresses better, the segment headers it drops
// being what gzip could not squeeze.
//
//	go run ./internal/wasmpack [-gap 4096] module.wasm
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbormem/arbor/internal/wasmbin"
)

func main() {
	gap := flag.Int("gap", 4096, "merge segments less than this many bytes apart")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmpack [-gap N] module.wasm")
		os.Exit(2)
	}
	if err := pack(flag.Arg(0), *gap); err != nil {
		fmt.Fprintf(os.Stderr, "wasmpack: %v\n", err)
		os.Exit(1)
	}
}

// pack rewrites the module at path in place, atomically, keeping its mode.
func pack(path string, gap int) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, before, after, err := wasmbin.PackData(bin, gap)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wasmpack-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	fmt.Printf("wasmpack: %s: %d data segments -> %d, %d -> %d bytes\n", path, before, after, len(bin), len(out))
	return nil
}
