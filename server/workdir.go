package server

import (
	"fmt"
	"os"
	"syscall"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/store"
)

// workdir resolves a run's working directory inside its checkout (DESIGN
// invariant 4), refusing escapes before any process starts.
func (s *Server) workdir(r store.Run) (string, error) {
	p, ok := s.config().Projects[r.Project]
	if !ok {
		return "", fmt.Errorf("project %q is no longer configured", r.Project)
	}
	wd, err := exec.ResolveWorkingDir(p.Path, r.Command)
	if err != nil {
		return "", fmt.Errorf("refusing working directory: %w", err)
	}
	return wd, nil
}

// checkWorkdir verifies, before a process of the run starts, that its
// working directory still resolves inside the checkout to the path resolved
// at launch and is the same directory (device and inode) as then: a
// directory or symlink swapped in between two steps, or while a proposal
// waited, stops the run.
func (x *execution) checkWorkdir() error {
	if x.tree != "" {
		return nil // a pull request's plan runs in its private tree, not the checkout
	}
	wd, err := x.s.workdir(x.run)
	if err != nil {
		return fmt.Errorf("before %s: %v; nothing more ran", x.current, err)
	}
	if wd != x.dir {
		return fmt.Errorf("before %s: the working directory now resolves to %s, not %s as at launch (a directory or symlink in the checkout changed); nothing more ran. Check the checkout, then submit the run again", x.current, wd, x.dir)
	}
	if x.run.WorkdirID == "" {
		return nil // a run stored before launches recorded the identity
	}
	id, err := dirIdentity(wd)
	if err != nil {
		return fmt.Errorf("before %s: reading the working directory %s: %v; nothing more ran", x.current, wd, err)
	}
	if id != x.run.WorkdirID {
		return fmt.Errorf("before %s: %s is no longer the directory it was at launch (it was replaced); nothing more ran. Check the checkout, then submit the run again", x.current, wd)
	}
	return nil
}

// openDir holds the run's working directory open, once checkWorkdir has
// checked it, and makes sure the handle is that directory (device and
// inode as at launch). Every process of the run then starts in the
// directory the handle holds (procDir), whatever the path names by then:
// a swap between the check and the start cannot move a process outside
// the checkout.
func (x *execution) openDir() error {
	f, err := os.Open(x.dir)
	if err != nil {
		return fmt.Errorf("opening the working directory %s: %v; nothing ran", x.dir, err)
	}
	fi, err := f.Stat()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if err != nil || !fi.IsDir() || (ok && x.run.WorkdirID != "" && fmt.Sprintf("%d:%d", st.Dev, st.Ino) != x.run.WorkdirID) {
		f.Close()
		return fmt.Errorf("the working directory %s changed while it was being opened; nothing ran. Check the checkout, then submit the run again", x.dir)
	}
	x.dirFile = f
	return nil
}

// procDir is where a process of the run starts: the held directory through
// /proc/self/fd (the child resolves it after fork, where it still has the
// descriptor), or the path where there is no /proc.
func (x *execution) procDir() string {
	if x.dirFile == nil {
		return x.dir
	}
	p := fmt.Sprintf("/proc/self/fd/%d", x.dirFile.Fd())
	if _, err := os.Stat(p); err != nil {
		return x.dir
	}
	return p
}

func (x *execution) closeDir() {
	if x.dirFile != nil {
		x.dirFile.Close()
	}
}
