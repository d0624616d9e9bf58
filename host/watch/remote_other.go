//go:build !linux && !darwin

package watch

// Remote reports no file system as remote where the host cannot tell
// (Windows, the BSDs): their watchers are trusted, as before.
func Remote(string) (string, bool) { return "", false }
