package sshd

import (
	"fmt"
	"net"
	"strings"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/recover"
	"github.com/switchtender/switchtender/server/api"
	gossh "golang.org/x/crypto/ssh"
)

// newSSHServer builds the SSH stack in soft-serve's manner: small wish
// middlewares (recover, then routing), public-key auth against configured
// users and agents (unknown keys are refused, and logged with their
// fingerprint), and the key checked again inside the session rather than
// trusted from the callback. The SSH limits (ssh_limits.go) wrap it: caps
// at accept, a handshake deadline, and an idle timeout once authenticated.
func (d *Door) newSSHServer() (*ssh.Server, func(net.Listener) net.Listener, error) {
	lim := d.checkedSSHLimits()
	keyLog := newRefusalLog()
	srv, err := wish.NewServer(
		wish.WithAddress(d.svc.Config().Server.SSHListen),
		wish.WithHostKeyPath(d.svc.Config().Server.HostKey),
		wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			if _, err := d.svc.Identify(key, ctx.RemoteAddr()); err == nil {
				return true
			}
			if _, ok := d.svc.Config().IdentifyWorker(key); ok {
				return true
			}
			d.noteRefusedKey(ctx, key, keyLog)
			return false
		}),
		wish.WithMiddleware(
			recover.Middleware(d.routeMiddleware()),
		),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("setting up the SSH server: %w", err)
	}
	srv.HandshakeTimeout = lim.Handshake
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": d.limitedSession(lim)}
	srv.ConnCallback = func(ctx ssh.Context, conn net.Conn) net.Conn {
		if lc, ok := conn.(*limitConn); ok {
			ctx.SetValue(limitConnKey{}, lc)
		}
		return conn
	}
	// A connection leaves the handshake count once the client has proven
	// it holds an accepted key (a signature, not just a query with a
	// public key anyone may know).
	srv.ServerConfigCallback = func(ctx ssh.Context) *gossh.ServerConfig {
		return &gossh.ServerConfig{
			VerifiedPublicKeyCallback: func(_ gossh.ConnMetadata, _ gossh.PublicKey, perms *gossh.Permissions, _ string) (*gossh.Permissions, error) {
				if lc := limitConnOf(ctx); lc != nil {
					lc.authenticated()
				}
				return perms, nil
			},
		}
	}
	cl := newConnLimiter(lim)
	acceptLog := newRefusalLog()
	return srv, func(ln net.Listener) net.Listener {
		return &limitListener{Listener: ln, cl: cl, log: d.log, refusal: acceptLog,
			refused: d.svc.SSHRefused("connection_limit")}
	}, nil
}

// noteRefusedKey tells the operator about a key no user or agent has, with
// what they need to add it: its SHA256 fingerprint and where it came from.
// It is told once the connection closes without getting in, with every key
// it offered, so the other keys of a user who does get in are not logged.
// Log lines and audit entries are both rate-limited (refusalLog): an
// unauthenticated party must not choose how often the store writes and
// syncs. The next entry recorded says how many were not, and the metric
// counts every refusal.
func (d *Door) noteRefusedKey(ctx ssh.Context, key ssh.PublicKey, rl *refusalLog) {
	if key == nil {
		return
	}
	remote := ctx.RemoteAddr()
	user := ctx.User()
	if len(user) > 64 {
		user = user[:64] + "..."
	}
	report := func(fingerprints []string) {
		d.svc.SSHRefused("unknown_key").Inc()
		ok, dropped := rl.allow(sourceOf(remote))
		if !ok {
			return
		}
		addr := ""
		if remote != nil {
			addr = remote.String()
		}
		d.log.Warn("refused an SSH key that no configured user or agent has",
			"fingerprint", strings.Join(fingerprints, ","), "remote", addr,
			"ssh_user", user, "unlogged_refusals", dropped)
		detail := fmt.Sprintf("keys %s from %s (ssh user %q) match no configured user or agent", strings.Join(fingerprints, ","), addr, user)
		if dropped > 0 {
			detail += fmt.Sprintf("; %d refused connections before this one were not recorded one by one (at most %d a minute per source address and %d in all are; switchtender_ssh_refused_total counts every one)", dropped, RefusalLogPerSource, refusalLogTotal)
		}
		d.svc.Audit("", "ssh", "refuse key", detail)
	}
	fp := gossh.FingerprintSHA256(key)
	if lc := limitConnOf(ctx); lc != nil {
		lc.noteRefusedKey(fp, report)
		return
	}
	report([]string{fp})
}

// routeMiddleware re-checks the key, then sends a session with a command to
// the command handler and one with a terminal and no command to the TUI.
// The command line is capped in length, then split by splitCommand (strict:
// an unterminated quote or a trailing backslash is refused with exit 2).
// A console, `log --follow` or `--wait` session exempts its connection from
// the idle timeout while it lasts.
func (d *Door) routeMiddleware() wish.Middleware {
	return func(next ssh.Handler) ssh.Handler {
		return func(sess ssh.Session) {
			done := d.startHandler(sess)
			if done == nil {
				return
			}
			defer done()
			d.svc.SSHSessions().Inc()
			defer d.svc.SSHSessions().Dec()
			id, err := d.svc.Identify(sess.PublicKey(), sess.RemoteAddr())
			ok := err == nil
			if pool, worker := d.svc.Config().IdentifyWorker(sess.PublicKey()); !ok && worker {
				if lc := limitConnOf(sess.Context()); lc != nil {
					defer lc.hold()() // a worker idles while it waits for work
				}
				d.svc.ServeRelay(sess, pool)
				return
			}
			if !ok {
				wish.Fatalln(sess, "switchtender: this key is not configured for any user or agent")
				return
			}
			raw := sess.RawCommand()
			if limit := d.lim.MaxCommand; len(raw) > limit {
				fmt.Fprintf(sess.Stderr(), "switchtender: the command is %d bytes, longer than the limit of %d bytes; nothing was run\n", len(raw), limit)
				_ = sess.Exit(api.ExitUsage)
				return
			}
			args, err := splitCommand(raw)
			if err != nil {
				fmt.Fprintf(sess.Stderr(), "switchtender: %v\n", err)
				_ = sess.Exit(api.ExitUsage)
				return
			}
			if len(args) == 0 {
				if _, _, isPty := sess.Pty(); isPty {
					if lc := limitConnOf(sess.Context()); lc != nil {
						defer lc.hold()()
					}
					d.serveTUI(sess, id)
					return
				}
				args = []string{"help"}
			}
			if keepsOpen(args) {
				if lc := limitConnOf(sess.Context()); lc != nil {
					defer lc.hold()()
				}
			}
			code := d.runCommand(sess, id, args)
			_ = sess.Exit(code)
		}
	}
}

// keepsOpen reports whether a command may rightly sit without traffic for
// long: `log --follow` and anything with `--wait` (in any spelling package
// flag accepts, unless set to false).
func keepsOpen(args []string) bool {
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue && (value == "false" || value == "0" || value == "f" || value == "F" || value == "FALSE" || value == "False") {
			continue
		}
		if name == "wait" || (name == "follow" && args[0] == "log") {
			return true
		}
	}
	return false
}
