//go:build darwin || freebsd || netbsd

package arborhost

import "syscall"

func statCtime(st *syscall.Stat_t) syscall.Timespec { return st.Ctimespec }
