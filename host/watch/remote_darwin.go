package watch

import "syscall"

// Remote names the file system dir is on when it is one whose changes made
// elsewhere (another machine) raise no FSEvents/kqueue event here: the
// watch starts without error and hears only this machine's writes.
// Watchers of such a root scan too (host/runtime).
func Remote(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	var b []byte
	for _, c := range st.Fstypename {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	switch name := string(b); name {
	case "nfs", "smbfs", "afpfs", "webdav", "macfuse", "osxfuse", "fusefs":
		return name, true
	}
	return "", false
}
