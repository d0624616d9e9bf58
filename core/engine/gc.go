package engine

// pauseGC is how an open pauses the collector while it restores what was
// persisted (pauseCollector); a variable so that tests can see when the
// open resumes it.
var pauseGC = pauseCollector
