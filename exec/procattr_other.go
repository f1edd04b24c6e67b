//go:build !linux

package exec

import "syscall"

// sysProcAttr starts the tool in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
