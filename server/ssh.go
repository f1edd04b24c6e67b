package server

import (
	"errors"
	"fmt"
	"net"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/recover"
)

// sshServer is the SSH listener with its middleware stack.
type sshServer interface {
	start() error
	addr() string
	close()
}

type wishServer struct {
	srv *ssh.Server
	ln  net.Listener
}

func (w *wishServer) start() error {
	ln, err := net.Listen("tcp", w.srv.Addr)
	if err != nil {
		return fmt.Errorf("listening for SSH on %s: %w", w.srv.Addr, err)
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
// users and agents (unknown keys are refused), and the key checked again
// inside the session rather than trusted from the callback.
func (s *Server) newSSHServer() (sshServer, error) {
	srv, err := wish.NewServer(
		wish.WithAddress(s.cfg.Server.SSHListen),
		wish.WithHostKeyPath(s.cfg.Server.HostKey),
		wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			_, ok := s.identify(key)
			return ok
		}),
		wish.WithMiddleware(
			recover.Middleware(s.routeMiddleware()),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("setting up the SSH server: %w", err)
	}
	return &wishServer{srv: srv}, nil
}

// identify maps a public key to a configured user or agent.
func (s *Server) identify(key ssh.PublicKey) (Identity, bool) {
	if key == nil {
		return Identity{}, false
	}
	name, agent, ok := s.cfg.Identify(key)
	if !ok {
		return Identity{}, false
	}
	id := Identity{Name: name, Agent: agent}
	if !agent {
		id.Roles = s.cfg.Users[name].Roles
	}
	return id, true
}

// routeMiddleware re-checks the key, then sends a session with a command to
// the command handler and one with a terminal and no command to the TUI.
func (s *Server) routeMiddleware() wish.Middleware {
	return func(next ssh.Handler) ssh.Handler {
		return func(sess ssh.Session) {
			id, ok := s.identify(sess.PublicKey())
			if !ok {
				wish.Fatalln(sess, "switchtender: this key is not configured for any user or agent")
				return
			}
			args := sess.Command()
			if len(args) == 0 {
				if _, _, isPty := sess.Pty(); isPty {
					s.serveTUI(sess, id)
					return
				}
				args = []string{"help"}
			}
			code := s.runCommand(sess, id, args)
			_ = sess.Exit(code)
		}
	}
}
