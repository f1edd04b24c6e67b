package server

import (
	"strings"

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

// maskOwnKeys adds the control node's key files to m, and the forges'
// tokens and webhook secrets the configuration holds (config.ForgeSecrets):
// the server's own credentials, which no run is given, so masking them in
// every run hides nothing a run shows on purpose. Like the key files, each
// in lower and upper case too.
func (s *Server) maskOwnKeys(m *mask.Masker) {
	cfg := s.config()
	maskKeyFiles(m, cfg.Server.SealKey, cfg.Server.HostKey)
	for _, v := range cfg.ForgeSecrets() {
		m.Add(v, strings.ToLower(v), strings.ToUpper(v))
	}
}

// maskConfigSecrets adds to m, for a pull request's plan, every secret the
// configuration holds in clear (each credential's token and env values,
// each notify URL and secret, each forge's token and webhook secret): a
// branch's file() of the configuration file would show them. Other runs
// mask only their own credentials besides the server's own (maskOwnKeys),
// since the team's configuration does not read the file and a static env
// value (a region) masked in every run would hide more than it protects.
func (s *Server) maskConfigSecrets(m *mask.Masker, r store.Run) {
	if r.Commit == nil || r.Commit.Ref == "" {
		return
	}
	m.Add(s.live.Load().scrubber.Values()...)
}
