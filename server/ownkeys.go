package server

import (
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/store"
)

// Switchtender's own keys are files its user can read, and so can the
// tofu processes it starts: a configuration (a pull request's branch, say)
// can read one with file() and print it in the plan's log. Every run's
// masker therefore holds the contents of the keys of the machine the run
// executes on: on the control node the sealing key and the SSH host key,
// on a relay worker its SSH key and the pool's delivery identity. (What a
// plan can send elsewhere, through a GET it is allowed, masking cannot
// stop: see docs/pull-requests.md.) A pull request's plan
// masks every secret the configuration file holds as well.

// maskOwnKeys adds the control node's key files to m.
func (s *Server) maskOwnKeys(m *mask.Masker) {
	srv := s.config().Server
	maskKeyFiles(m, srv.SealKey, srv.HostKey)
}

// maskConfigSecrets adds to m, for a pull request's plan, every secret the
// configuration holds in clear (each credential's token and env values,
// each notify URL and secret): a branch's file() of the configuration file
// would show them. Other runs mask only their own credentials, since the
// team's configuration does not read the file and a static env value (a
// region) masked in every run would hide more than it protects.
func (s *Server) maskConfigSecrets(m *mask.Masker, r store.Run) {
	if r.Commit == nil || r.Commit.Ref == "" {
		return
	}
	m.Add(s.live.Load().scrubber.Values()...)
}
