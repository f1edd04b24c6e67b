package server

import (
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
)

// withConfig fills the SSH limits Options leaves at zero from the
// configuration's server block (where zero also means the default).
func (o Options) withConfig(c config.Server) Options {
	pick := func(opt *int, cfg int) {
		if *opt <= 0 {
			*opt = cfg
		}
	}
	if o.SSHHandshakeTimeout <= 0 {
		o.SSHHandshakeTimeout = c.SSHHandshakeTimeout
	}
	if o.SSHIdleTimeout <= 0 {
		o.SSHIdleTimeout = c.SSHIdleTimeout
	}
	pick(&o.SSHMaxStartups, c.SSHMaxStartups)
	pick(&o.SSHMaxConns, c.SSHMaxConns)
	pick(&o.SSHMaxConnsPerSource, c.SSHMaxConnsPerSource)
	pick(&o.SSHMaxCommandBytes, c.SSHMaxCommandBytes)
	pick(&o.SSHMaxSessionsPerConn, c.SSHMaxSessions)
	return o
}

// sshLimits fills in the defaults for zero (or negative) SSH options.
func (o Options) sshLimits() api.SSHLimits {
	l := api.SSHLimits{
		Handshake:  o.SSHHandshakeTimeout,
		Startups:   o.SSHMaxStartups,
		Total:      o.SSHMaxConns,
		PerSource:  o.SSHMaxConnsPerSource,
		Idle:       o.SSHIdleTimeout,
		MaxCommand: o.SSHMaxCommandBytes,
		Sessions:   o.SSHMaxSessionsPerConn,
	}
	if l.Handshake <= 0 {
		l.Handshake = api.DefaultSSHHandshakeTimeout
	}
	if l.Startups <= 0 {
		l.Startups = api.DefaultSSHMaxStartups
	}
	if l.Total <= 0 {
		l.Total = api.DefaultSSHMaxConns
	}
	if l.PerSource <= 0 {
		l.PerSource = api.DefaultSSHMaxConnsPerSource
	}
	if l.Idle <= 0 {
		l.Idle = api.DefaultSSHIdleTimeout
	}
	if l.MaxCommand <= 0 {
		l.MaxCommand = api.DefaultSSHMaxCommandBytes
	}
	if l.Sessions <= 0 {
		l.Sessions = api.DefaultSSHMaxSessions
	}
	return l
}

// SSHLimits are the SSH limits the front door enforces: Options' SSH
// fields, then the configuration's server block at New, with defaults for
// what neither sets.
func (s *Server) SSHLimits() api.SSHLimits { return s.sshLimits }
