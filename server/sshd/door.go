// Package sshd is Switchtender's front door: what people and agents can do
// over SSH. It holds the SSH transport and its limits, the command table
// (a file per command), the JSON views, MCP and the console adapter (package
// tui). It reaches the control-node service only through the Service
// interface it declares, and never imports package server.
package sshd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
)

// Door is the SSH front door of one service. Create it with New, start it
// with Listen, stop it with Close.
type Door struct {
	svc  Service
	log  *slog.Logger
	lim  api.SSHLimits                   // the service's SSH limits, as New read them
	srv  *ssh.Server                     // the wish stack (newSSHServer)
	wrap func(net.Listener) net.Listener // the connection caps at accept

	mu     sync.Mutex
	ln     net.Listener // nil until Listen
	closed bool
}

// New builds the door for svc: the SSH stack on the configuration's
// ssh_listen and host_key, with the service's SSH limits. It listens
// only once Listen is called.
func New(svc Service) (*Door, error) {
	d := &Door{svc: svc, log: svc.Logger(), lim: svc.SSHLimits()}
	srv, wrap, err := d.newSSHServer()
	if err != nil {
		return nil, err
	}
	d.srv, d.wrap = srv, wrap
	return d, nil
}

// Listen binds the configured address and serves SSH on it in the
// background; it returns once the listener is bound, or why it cannot be.
func (d *Door) Listen() error {
	ln, err := net.Listen("tcp", d.srv.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listening for SSH on %s: %w; another process has that port: stop it, or choose another address (ssh_listen in the server block; `demo --listen 127.0.0.1:2223`)", d.srv.Addr, err)
		}
		return fmt.Errorf("listening for SSH on %s: %w", d.srv.Addr, err)
	}
	ln = d.wrap(ln)
	d.mu.Lock()
	d.ln = ln
	d.mu.Unlock()
	go func() { _ = d.srv.Serve(ln) }() // ends with ssh.ErrServerClosed at Close
	return nil
}

// Addr is the address the door listens on (useful with port 0), or ""
// before Listen.
func (d *Door) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ln == nil {
		return ""
	}
	return d.ln.Addr().String()
}

// Listening reports whether the door takes connections: Listen bound its
// address and Close has not been called.
func (d *Door) Listening() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ln != nil && !d.closed
}

// Close stops taking connections and closes the open ones; a second call
// does nothing.
func (d *Door) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	if err := d.srv.Close(); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
		return fmt.Errorf("closing the SSH server: %w", err)
	}
	return nil
}
