package watch

import "syscall"

// Remote names the file system dir is on when it is one whose changes made
// elsewhere (another machine, the Windows side of WSL) raise no inotify
// event here: the watch starts without error and hears only this
// machine's writes. Watchers of such a root scan too (host/runtime).
func Remote(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	name, ok := remoteTypes[uint32(st.Type)]
	return name, ok
}

// remoteTypes are the statfs magic numbers of such file systems
// (linux/magic.h and the file systems' own headers).
var remoteTypes = map[uint32]string{
	0x6969:     "NFS",
	0x517b:     "SMB",
	0xff534d42: "CIFS",
	0xfe534d42: "SMB2",
	0x65735546: "FUSE (sshfs, rclone, a cloud drive)",
	0x01021997: "9P (WSL's Windows drives)",
	0x73757245: "Coda",
	0x5346414f: "AFS",
	0x00c36400: "Ceph",
	0x01161970: "GFS2",
	0x7461636f: "OCFS2",
	0x0bd00bd0: "Lustre",
}
