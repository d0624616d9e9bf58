package engine

import "github.com/arbormem/arbor/core/internal/gcpause"

// pauseGC is how an open pauses the collector while it restores what was
// persisted (gcpause.Pause); a variable so that tests can see when and how
// the open resumes it.
var pauseGC = gcpause.Pause
