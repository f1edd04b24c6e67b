package api

import "time"

// Defaults of the SSH limits (the service's SSH options; docs/ssh-limits.md).
const (
	// DefaultSSHHandshakeTimeout is OpenSSH's LoginGraceTime shortened
	// (OpenSSH: 120 s): accept to a proven public key.
	DefaultSSHHandshakeTimeout = 30 * time.Second
	// DefaultSSHMaxStartups is the cap on connections in their handshake,
	// OpenSSH's MaxStartups "full" figure lowered from 100.
	DefaultSSHMaxStartups = 64
	// DefaultSSHMaxConns caps open connections in total.
	DefaultSSHMaxConns = 256
	// DefaultSSHMaxConnsPerSource caps open connections from one IP address.
	DefaultSSHMaxConnsPerSource = 32
	// DefaultSSHIdleTimeout closes an authenticated connection with no
	// traffic and no console, follow or wait session.
	DefaultSSHIdleTimeout = 10 * time.Minute
	// DefaultSSHMaxCommandBytes caps a command line before it is split.
	DefaultSSHMaxCommandBytes = 64 << 10
	// DefaultSSHMaxSessions caps the session channels open on one
	// connection (OpenSSH's MaxSessions, also 10).
	DefaultSSHMaxSessions = 10
)

// SSHLimits are the SSH limits in force (docs/ssh-limits.md): the
// service's options with the defaults filled in.
type SSHLimits struct {
	Handshake  time.Duration
	Startups   int
	Total      int
	PerSource  int
	Idle       time.Duration
	MaxCommand int
	Sessions   int // session channels open at once on one connection
}

// FitDescriptors lowers the total connection cap to half of soft, the
// process's RLIMIT_NOFILE soft limit (0: unknown, nothing changes), so the
// other half stays for the store, logs and the pipes of tool processes; the
// handshake cap is kept within the total. It reports whether the total was
// lowered.
func (l SSHLimits) FitDescriptors(soft uint64) (SSHLimits, bool) {
	lowered := false
	if soft > 0 && uint64(l.Total) > soft/2 {
		l.Total = max(int(soft/2), 1)
		lowered = true
	}
	l.Startups = min(l.Startups, l.Total)
	return l, lowered
}

// StartupsPerSource is how many of the connections in their handshake one
// source address may hold: a quarter of the cap, or half the per-source
// connection cap when that is more, but never more than half the cap. With
// the defaults (64, 32) it is 16; an address whose per-source cap was raised
// (a proxy, a NAT) gets a larger share, and a flood from one address still
// cannot keep everyone else out of the handshake.
func (l SSHLimits) StartupsPerSource() int {
	return max(1, l.Startups/4, min(l.Startups/2, l.PerSource/2))
}

// Exit codes of SSH commands.
const (
	ExitOK      = 0
	ExitRefused = 1 // a refusal or a run that did not succeed (--wait)
	ExitUsage   = 2 // the command's words are off
)
