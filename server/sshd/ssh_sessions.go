package sshd

import (
	"fmt"
	"sync"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
	gossh "golang.org/x/crypto/ssh"
)

// Sessions per connection (docs/ssh-limits.md): one connection may hold
// at most ssh_max_sessions_per_connection session channels open at once,
// and as many handlers running for them. Past it a new channel is refused
// before it is accepted, with the reason, counted in
// switchtender_ssh_refused_total{reason="session_limit"} and logged
// (rate-limited per source). Before this, one connection of a user with no
// roles opened 8,000 `mcp` sessions and the server grew from 25 MB to
// 863 MB.

// sessionSlots counts a connection's open session channels and the
// command handlers still running for them; a handler may outlive its
// channel for a moment, and is counted apart so neither can pile up.
type sessionSlots struct {
	mu       sync.Mutex
	channels int
	handlers int
}

// take counts one more in *n unless it is already at limit; it returns the
// function that gives the place back (once), or nil when refused.
func (sl *sessionSlots) take(n *int, limit int) func() {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if *n >= limit {
		return nil
	}
	*n++
	var once sync.Once
	return func() {
		once.Do(func() {
			sl.mu.Lock()
			*n--
			sl.mu.Unlock()
		})
	}
}

// sessionLimitReason is the sentence a refused channel carries.
func sessionLimitReason(limit int) string {
	return fmt.Sprintf("this connection already has %d sessions open, the most one may (ssh_max_sessions_per_connection); close one, or open another connection", limit)
}

// limitedSession is the session channel handler: it refuses a channel past
// the connection's session cap, then serves it with env requests bounded
// (envLimitedChannel) until the channel closes.
func (d *Door) limitedSession(lim api.SSHLimits) ssh.ChannelHandler {
	return func(srv *ssh.Server, conn *gossh.ServerConn, newChan gossh.NewChannel, ctx ssh.Context) {
		if lc := limitConnOf(ctx); lc != nil {
			release := lc.slots.take(&lc.slots.channels, lim.Sessions)
			if release == nil {
				d.refuseSession(lc, lim.Sessions)
				_ = newChan.Reject(gossh.ResourceShortage, sessionLimitReason(lim.Sessions))
				return
			}
			defer release()
		}
		ssh.DefaultSessionHandler(srv, conn, envLimitedChannel{newChan}, ctx)
	}
}

// startHandler counts a command handler on sess's connection; it returns
// the function that counts it out, or nil after telling the client why it
// is refused (more handlers still running than the cap).
func (d *Door) startHandler(sess ssh.Session) func() {
	lc := limitConnOf(sess.Context())
	if lc == nil {
		return func() {}
	}
	limit := d.lim.Sessions
	if done := lc.slots.take(&lc.slots.handlers, limit); done != nil {
		return done
	}
	d.refuseSession(lc, limit)
	fmt.Fprintf(sess.Stderr(), "switchtender: %s; nothing was run\n", sessionLimitReason(limit))
	_ = sess.Exit(exitRefused)
	return nil
}

// refuseSession counts and logs (rate-limited per source) a session
// refused on lc.
func (d *Door) refuseSession(lc *limitConn, limit int) {
	d.svc.SSHRefused("session_limit").Inc()
	if ok, dropped := lc.cl.sessionLog.allow(lc.source); ok {
		d.log.Warn("refused an SSH session: the connection is at its session cap", "remote", lc.RemoteAddr().String(),
			"cap", limit, "setting", "ssh_max_sessions_per_connection", "unlogged_refusals", dropped)
	}
}
