package api

import (
	"encoding/json"
	"os"
	"testing"
)

// The npm package and the Go code are one release.
func TestVersionMatchesPackageJSON(t *testing.T) {
	b, err := os.ReadFile("../../package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != Version {
		t.Errorf("package.json says %q, api.Version %q", pkg.Version, Version)
	}
}
