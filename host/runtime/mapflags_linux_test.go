//go:build linux && (amd64 || arm64)

package runtime

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// The linear memory's reservation is advised for huge pages: the kernel
// lists the advice ("hg") among the mapping's flags.
func TestMmapMemoryHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	const page = 1 << 16
	m := linearMemory().Allocate(page, 256*page)
	defer m.Free()
	b := m.Reallocate(64 * page)
	if b == nil {
		t.Fatal("no memory")
	}
	flags, err := mappingFlags(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the reservation's flags are %q, without hg", flags)
	}
}

// mappingFlags returns the VmFlags of the mapping that starts at addr, as
// /proc/self/smaps lists them.
func mappingFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	start := fmt.Sprintf("%x-", addr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, start) {
			in = true
		}
		if in {
			if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return strings.TrimSpace(v), nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping starts at %#x", addr)
}
