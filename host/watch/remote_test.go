package watch

import "testing"

// A local folder (the test's temporary one) is not taken for a network
// file system: its watcher alone is trusted.
func TestRemoteLocalFolder(t *testing.T) {
	if name, remote := Remote(t.TempDir()); remote {
		t.Skipf("the temporary folder is on %s here", name)
	}
	if _, remote := Remote(t.TempDir() + "/missing"); remote {
		t.Error("a folder that does not exist is remote")
	}
}
