package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// fullDisk is a MemFS whose every write is refused for want of space
// while full is set (the host's code -8), as a disk or a quota filled up.
type fullDisk struct {
	*host.MemFS
	full bool
}

func (f *fullDisk) refuse(op, p string) error {
	if f.full {
		return fmt.Errorf("%s %s: %w", op, p, host.ErrNoSpace)
	}
	return nil
}

func (f *fullDisk) WriteFile(p string, data []byte) error {
	if err := f.refuse("write", p); err != nil {
		return err
	}
	return f.MemFS.WriteFile(p, data)
}

func (f *fullDisk) Swap(p string, data, old []byte, existed bool) error {
	if err := f.refuse("write", p); err != nil {
		return err
	}
	return f.MemFS.Swap(p, data, old, existed)
}

func (f *fullDisk) Append(p string, data []byte) error {
	if err := f.refuse("append", p); err != nil {
		return err
	}
	return f.MemFS.Append(p, data)
}

func (f *fullDisk) Rename(from, to string) error {
	if err := f.refuse("rename", from); err != nil {
		return err
	}
	return f.MemFS.Rename(from, to)
}

// A full disk says so: a curate operation fails saying the disk is full
// and nothing was written, a flush that the index of the answers so far
// stands but was not saved; the memory still answers.
func TestFullDiskSaysSo(t *testing.T) {
	mem := host.NewMemFS()
	if err := mem.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(billingEntry)); err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{MemFS: mem}
	s := NewSession(disk, host.NopLogger{})
	mustOpen(t, s)
	add := func(title string) map[string]any {
		res, errObj := call(t, s, "curate", map[string]any{"operations": []map[string]any{{
			"type": "ADD", "path": "engineering/billing", "title": title,
			"content": map[string]any{"narrative": "the walrus tier costs more"}, "reason": "test",
		}}})
		if errObj != nil {
			t.Fatalf("curate: %v", errObj)
		}
		return res["applied"].([]any)[0].(map[string]any)
	}
	if a := add("Walrus Pricing"); a["status"] != "success" {
		t.Fatalf("ADD before the disk filled: %v", a)
	}
	disk.full = true
	a := add("Walrus Discounts")
	if msg, _ := a["message"].(string); a["status"] != "failed" || !strings.HasPrefix(msg, "the disk is full: nothing was written (") {
		t.Errorf("ADD on a full disk: %v", a)
	}
	if _, err := mem.ReadFile("engineering/billing/walrus_discounts.md"); err == nil {
		t.Error("the refused ADD wrote its entry")
	}
	_, errObj := call(t, s, "flush", nil)
	if msg, _ := errObj["message"].(string); errObj["code"] != "io" || !strings.Contains(msg, "index not saved, the disk is full (the answers stand") || !strings.Contains(msg, "no space left") {
		t.Errorf("flush on a full disk: %v", errObj)
	}
	if got := searchPaths(t, s, "walrus"); strings.Join(got, " ") != "engineering/billing/walrus_pricing.md" {
		t.Errorf("search on a full disk: %v, want the entry written before it filled", got)
	}
}

// A memory read on a full disk closes without an error: the signals its
// reads counted are not saved, which is a warning, as for the index.
func TestFullDiskClosesAfterReads(t *testing.T) {
	mem := host.NewMemFS()
	if err := mem.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(billingEntry)); err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{MemFS: mem}
	log := &logLines{}
	s := NewSession(disk, log)
	mustOpen(t, s)
	disk.full = true
	if got := searchPaths(t, s, "invoice retry"); len(got) != 1 {
		t.Fatalf("search on a full disk: %v", got)
	}
	if _, err := call(t, s, "read", map[string]any{"path": "engineering/billing/invoice_retry_policy.md"}); err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	if _, errObj := call(t, s, "close", nil); errObj != nil {
		t.Errorf("close after reads on a full disk: %v", errObj)
	}
	if !log.has("lifecycle signals not saved, the disk is full") {
		t.Errorf("no warning of the unsaved signals: %q", log.lines)
	}
}
