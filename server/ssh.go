package server

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/recover"
	gossh "golang.org/x/crypto/ssh"
)

// sshServer is the SSH listener with its middleware stack.
type sshServer interface {
	start() error
	addr() string
	close()
}

type wishServer struct {
	srv  *ssh.Server
	ln   net.Listener
	wrap func(net.Listener) net.Listener // the connection caps at accept
}

func (w *wishServer) start() error {
	ln, err := net.Listen("tcp", w.srv.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listening for SSH on %s: %w; another process has that port: stop it, or choose another address (ssh_listen in the server block; `demo --listen 127.0.0.1:2223`)", w.srv.Addr, err)
		}
		return fmt.Errorf("listening for SSH on %s: %w", w.srv.Addr, err)
	}
	if w.wrap != nil {
		ln = w.wrap(ln)
	}
	w.ln = ln
	go func() {
		if err := w.srv.Serve(ln); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
			_ = err
		}
	}()
	return nil
}

func (w *wishServer) addr() string { return w.ln.Addr().String() }
func (w *wishServer) close()       { _ = w.srv.Close() }

// newSSHServer builds the SSH stack in soft-serve's manner: small wish
// middlewares (recover, then routing), public-key auth against configured
// users and agents (unknown keys are refused, and logged with their
// fingerprint), and the key checked again inside the session rather than
// trusted from the callback. The SSH limits (ssh_limits.go) wrap it: caps
// at accept, a handshake deadline, and an idle timeout once authenticated.
func (s *Server) newSSHServer() (sshServer, error) {
	lim := s.checkedSSHLimits()
	keyLog := newRefusalLog()
	srv, err := wish.NewServer(
		wish.WithAddress(s.config().Server.SSHListen),
		wish.WithHostKeyPath(s.config().Server.HostKey),
		wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			if _, ok := s.identify(key); ok {
				return true
			}
			if _, ok := s.config().IdentifyWorker(key); ok {
				return true
			}
			s.noteRefusedKey(ctx, key, keyLog)
			return false
		}),
		wish.WithMiddleware(
			recover.Middleware(s.routeMiddleware()),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("setting up the SSH server: %w", err)
	}
	srv.HandshakeTimeout = lim.handshake
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.limitedSession(lim)}
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
	return &wishServer{srv: srv, wrap: func(ln net.Listener) net.Listener {
		return &limitListener{Listener: ln, cl: cl, log: s.log, refusal: acceptLog,
			refused: s.metrics.sshRefused.WithLabelValues("connection_limit")}
	}}, nil
}

// noteRefusedKey tells the operator about a key no user or agent has, with
// what they need to add it: its SHA256 fingerprint and where it came from.
// It is told once the connection closes without getting in, with every key
// it offered, so the other keys of a user who does get in are not logged.
// Log lines and audit entries are both rate-limited (refusalLog): an
// unauthenticated party must not choose how often the store writes and
// syncs. The next entry recorded says how many were not, and the metric
// counts every refusal.
func (s *Server) noteRefusedKey(ctx ssh.Context, key ssh.PublicKey, rl *refusalLog) {
	if key == nil {
		return
	}
	remote := ctx.RemoteAddr()
	user := ctx.User()
	if len(user) > 64 {
		user = user[:64] + "..."
	}
	report := func(fingerprints []string) {
		s.metrics.sshRefused.WithLabelValues("unknown_key").Inc()
		ok, dropped := rl.allow(sourceOf(remote))
		if !ok {
			return
		}
		addr := ""
		if remote != nil {
			addr = remote.String()
		}
		s.log.Warn("refused an SSH key that no configured user or agent has",
			"fingerprint", strings.Join(fingerprints, ","), "remote", addr,
			"ssh_user", user, "unlogged_refusals", dropped)
		detail := fmt.Sprintf("keys %s from %s (ssh user %q) match no configured user or agent", strings.Join(fingerprints, ","), addr, user)
		if dropped > 0 {
			detail += fmt.Sprintf("; %d refused connections before this one were not recorded one by one (at most %d a minute per source address and %d in all are; switchtender_ssh_refused_total counts every one)", dropped, refusalLogPerSource, refusalLogTotal)
		}
		s.audit("", "ssh", "refuse key", detail)
	}
	fp := gossh.FingerprintSHA256(key)
	if lc := limitConnOf(ctx); lc != nil {
		lc.noteRefusedKey(fp, report)
		return
	}
	report([]string{fp})
}

// identify maps a public key to a configured user or agent.
func (s *Server) identify(key ssh.PublicKey) (Identity, bool) {
	if key == nil {
		return Identity{}, false
	}
	cfg := s.config() // one configuration for both looks (Reload swaps it)
	name, agent, ok := cfg.Identify(key)
	if !ok {
		return Identity{}, false
	}
	id := Identity{Name: name, Agent: agent, key: key}
	if !agent {
		id.Roles = cfg.Users[name].Roles
	}
	return id, true
}

// current returns who as the configuration says now: a session stays open
// across a reload, and each act is judged by the identity its key (or,
// without one, its name) has in the configuration in force, with the roles
// it has there. A key or name the configuration no longer has is refused.
// The schedule's own identity is the server's and passes as it is.
func (s *Server) current(who Identity) (Identity, error) {
	if who.Name == scheduleIdentity.Name && who.key == nil {
		return who, nil
	}
	cfg := s.config()
	if who.key != nil {
		now, ok := s.identify(who.key)
		if !ok || now.Name != who.Name {
			return Identity{}, errorf(ErrForbidden, "the key this session connected with no longer belongs to %s (the configuration was reloaded); nothing was done. Connect again", who.Name)
		}
		return now, nil
	}
	if who.Agent {
		if _, ok := cfg.Agents[who.Name]; !ok {
			return Identity{}, errorf(ErrForbidden, "agent %s is no longer configured (the configuration was reloaded); nothing was done", who.Name)
		}
		return Identity{Name: who.Name, Agent: true}, nil
	}
	u, ok := cfg.Users[who.Name]
	if !ok {
		return Identity{}, errorf(ErrForbidden, "user %s is no longer configured (the configuration was reloaded); nothing was done", who.Name)
	}
	return Identity{Name: who.Name, Roles: u.Roles}, nil
}

// routeMiddleware re-checks the key, then sends a session with a command to
// the command handler and one with a terminal and no command to the TUI.
// The command line is capped in length, then split by splitCommand (strict:
// an unterminated quote or a trailing backslash is refused with exit 2).
// A console, `log --follow` or `--wait` session exempts its connection from
// the idle timeout while it lasts.
func (s *Server) routeMiddleware() wish.Middleware {
	return func(next ssh.Handler) ssh.Handler {
		return func(sess ssh.Session) {
			done := s.startHandler(sess)
			if done == nil {
				return
			}
			defer done()
			s.metrics.sshOpen.Inc()
			defer s.metrics.sshOpen.Dec()
			id, ok := s.identify(sess.PublicKey())
			if pool, worker := s.config().IdentifyWorker(sess.PublicKey()); !ok && worker {
				s.serveRelay(sess, pool)
				return
			}
			if !ok {
				wish.Fatalln(sess, "switchtender: this key is not configured for any user or agent")
				return
			}
			raw := sess.RawCommand()
			if limit := s.sshLimits.maxCommand; len(raw) > limit {
				fmt.Fprintf(sess.Stderr(), "switchtender: the command is %d bytes, longer than the limit of %d bytes; nothing was run\n", len(raw), limit)
				_ = sess.Exit(exitUsage)
				return
			}
			args, err := splitCommand(raw)
			if err != nil {
				fmt.Fprintf(sess.Stderr(), "switchtender: %v\n", err)
				_ = sess.Exit(exitUsage)
				return
			}
			if len(args) == 0 {
				if _, _, isPty := sess.Pty(); isPty {
					if lc := limitConnOf(sess.Context()); lc != nil {
						defer lc.hold()()
					}
					s.serveTUI(sess, id)
					return
				}
				args = []string{"help"}
			}
			if keepsOpen(args) {
				if lc := limitConnOf(sess.Context()); lc != nil {
					defer lc.hold()()
				}
			}
			code := s.runCommand(sess, id, args)
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
