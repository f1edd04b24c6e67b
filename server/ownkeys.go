package server

import (
	"os"

	"github.com/switchtender/switchtender/exec/mask"
)

// Switchtender's own keys are files its user can read, and so can the
// tofu processes it starts: a configuration (a pull request's branch, say)
// can read one with file() and print it in the plan's log. Every run's
// masker therefore holds the contents of the keys of the machine the run
// executes on: on the control node the sealing key and the SSH host key,
// on a relay worker its SSH key and the pool's delivery identity. (What a
// plan can send elsewhere, through a GET it is allowed, masking cannot
// stop: see the README, "Pull-request plans".)

// maskKeyFiles adds the contents of the key files at paths to m; a file
// that cannot be read (not created yet) adds nothing.
func maskKeyFiles(m *mask.Masker, paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 1<<20 {
			continue
		}
		m.Add(string(b))
		clear(b)
	}
}

// maskOwnKeys adds the control node's key files to m.
func (s *Server) maskOwnKeys(m *mask.Masker) {
	srv := s.config().Server
	maskKeyFiles(m, srv.SealKey, srv.HostKey)
}
