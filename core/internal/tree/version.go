package tree

import (
	"crypto/sha256"
	"encoding/hex"
)

// Version names a file's bytes for writes made from what was read
// (api.Operation.Base): the first 16 hex digits of their SHA-256. Equal
// bytes give equal versions on every host and in every release; an edit
// gives another.
func Version(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
