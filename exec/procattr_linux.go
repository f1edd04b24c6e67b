package exec

import "syscall"

// sysProcAttr starts the tool in its own process group (so an interrupt
// reaches the tool and what it started) and has the kernel send it SIGINT
// if the server dies: a tool must not go on changing infrastructure and
// holding the state lock after the server that started it was killed, with
// nobody logging it. OpenTofu takes SIGINT as a request to stop gracefully
// and release its state lock.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
}
