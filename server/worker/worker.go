// Package worker is the relay worker: the second process, which dials the
// control node over SSH (package relay's wire), takes runs from its pool
// and carries each out with the steps the control node runs (package
// runstep), in its own checkouts and private directories, masking every
// line before it leaves. It never imports package server.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// WorkerOptions are what RunWorker needs besides the worker's file.
type WorkerOptions struct {
	// Environ is the environment tool processes inherit (normally
	// os.Environ()); its PATH must reach tofu.
	Environ []string
	// Logger receives operator detail; nil discards it.
	Logger *slog.Logger
	// Version is reported to the control node (`workers`).
	Version string
	// Drain, once closed, makes the worker take no new run, finish the one
	// it has and return (SIGTERM).
	Drain <-chan struct{}
}

// worker is a relay worker: its file, keys and state.
type worker struct {
	cfg      *config.Worker
	opts     WorkerOptions
	log      *slog.Logger
	signer   gossh.Signer
	hostKeys gossh.HostKeyCallback
	delivery *seal.Key     // nil when the file names no delivery_identity
	idleBeat time.Duration // how often to heartbeat while idle, as the control node said
}

// errWorkerRefused is a refusal that reconnecting cannot fix.
var errWorkerRefused = errors.New("refused by the control node")

// RunWorker runs a relay worker until ctx ends or, after Drain is closed,
// its current run ends. It dials the control node over SSH (the host key
// checked against known_hosts), takes runs from its pool and runs tofu in
// its own checkouts. A worker whose PATH has no tofu says so and takes no
// runs. A lost connection is dialled again, with backoff.
func RunWorker(ctx context.Context, cfg *config.Worker, opts WorkerOptions) error {
	w, err := newWorker(cfg, opts)
	if err != nil {
		return err
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Close()
	w.cleanLeftovers()
	w.log.Info("dialling the control node", "control", cfg.Control, "pool", cfg.Pool, "worker", cfg.Name)
	backoff := time.Second
	for {
		err := w.session(ctx)
		switch {
		case errors.Is(err, errDrained):
			w.log.Info("drained: no run is left; the worker stops")
			return nil
		case errors.As(err, new(*stoppedDuringRun)):
			return err // a run was interrupted: say which
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errWorkerRefused):
			return err
		}
		w.log.Warn("relay connection ended; dialling again", "control", cfg.Control, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-opts.Drain:
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// newWorker checks what a worker needs before it dials: tofu on its PATH,
// its SSH key, the control node's host key and the delivery identity.
func newWorker(cfg *config.Worker, opts WorkerOptions) (*worker, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	eng, err := exec.EngineFor("opentofu")
	if err != nil {
		return nil, err
	}
	if _, err := eng.Find(runstep.EnvValue(opts.Environ, "PATH")); err != nil {
		return nil, fmt.Errorf("tofu is not on this worker's PATH (%s), and a worker without tofu on its PATH takes no runs, so it did not connect. Install tofu (`switchtender tofu` builds the pinned version) or add its directory to the PATH, then start the worker again", runstep.EnvValue(opts.Environ, "PATH"))
	}
	w := &worker{cfg: cfg, opts: opts, log: opts.Logger}
	pem, err := os.ReadFile(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("reading the worker's SSH key: %w", err)
	}
	if w.signer, err = gossh.ParsePrivateKey(pem); err != nil {
		return nil, fmt.Errorf("reading the worker's SSH key %s (an unencrypted OpenSSH private key): %w", cfg.Key, err)
	}
	if w.hostKeys, err = knownhosts.New(cfg.KnownHosts); err != nil {
		return nil, fmt.Errorf("reading known_hosts %s: %w", cfg.KnownHosts, err)
	}
	if cfg.DeliveryIdentity != "" {
		if w.delivery, err = seal.LoadKey(cfg.DeliveryIdentity); err != nil {
			return nil, fmt.Errorf("reading the pool's delivery identity: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the worker's data directory: %w", err)
	}
	return w, nil
}

// dial opens the SSH connection and the relay session, and says hello.
func (w *worker) dial(ctx context.Context) (*gossh.Client, *relay.Conn, error) {
	d := net.Dialer{Timeout: 15 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", w.cfg.Control)
	if err != nil {
		return nil, nil, fmt.Errorf("dialling the control node %s: %w", w.cfg.Control, err)
	}
	cc, chans, reqs, err := gossh.NewClientConn(nc, w.cfg.Control, &gossh.ClientConfig{
		User: w.cfg.Name, Auth: []gossh.AuthMethod{gossh.PublicKeys(w.signer)},
		HostKeyCallback: w.hostKeys, Timeout: 15 * time.Second,
	})
	if err != nil {
		nc.Close()
		return nil, nil, w.dialErr(err)
	}
	client := gossh.NewClient(cc, chans, reqs)
	c, every, err := w.openRelay(client)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	w.idleBeat = every
	return client, c, nil
}

// dialErr says what to do about a failed handshake; a host key mismatch
// or a refused key is not retried.
func (w *worker) dialErr(err error) error {
	var ke *knownhosts.KeyError
	switch {
	case errors.As(err, &ke) && len(ke.Want) > 0:
		return fmt.Errorf("%w: the control node %s offered a host key that %s does not hold for it (%v); check the control node, then update known_hosts", errWorkerRefused, w.cfg.Control, w.cfg.KnownHosts, err)
	case errors.As(err, &ke):
		return fmt.Errorf("%w: %s holds no host key for %s; add it with `ssh-keyscan -p PORT HOST >> %s`", errWorkerRefused, w.cfg.KnownHosts, w.cfg.Control, w.cfg.KnownHosts)
	case strings.Contains(err.Error(), "unable to authenticate"):
		return fmt.Errorf("%w: the control node did not accept this worker's key %s; list its public key in pool %q's workers", errWorkerRefused, gossh.FingerprintSHA256(w.signer.PublicKey()), w.cfg.Pool)
	}
	return fmt.Errorf("SSH handshake with %s: %w", w.cfg.Control, err)
}

// openRelay starts the relay session and exchanges hello and welcome; it
// returns how often the worker heartbeats while idle.
func (w *worker) openRelay(client *gossh.Client) (*relay.Conn, time.Duration, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, 0, fmt.Errorf("opening the relay session: %w", err)
	}
	in, err := sess.StdinPipe()
	if err != nil {
		return nil, 0, fmt.Errorf("opening the relay session: %w", err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		return nil, 0, fmt.Errorf("opening the relay session: %w", err)
	}
	if err := sess.Start(relay.Command); err != nil {
		return nil, 0, fmt.Errorf("starting the relay session: %w", err)
	}
	c := relay.NewConn(out, in)
	var projects []string
	for name := range w.cfg.Projects {
		projects = append(projects, name)
	}
	if err := c.Send(relay.Msg{Type: relay.MsgHello, Name: w.cfg.Name, Pool: w.cfg.Pool, Version: w.opts.Version, Projects: projects}); err != nil {
		return nil, 0, err
	}
	m, err := c.Recv()
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("reading the control node's welcome: %w", err)
	case m.Type == relay.MsgRefused && m.Busy:
		return nil, 0, errors.New(m.Message) // tried again, with backoff
	case m.Type == relay.MsgRefused:
		return nil, 0, fmt.Errorf("%w: %s", errWorkerRefused, m.Message)
	case m.Type != relay.MsgWelcome:
		return nil, 0, fmt.Errorf("the control node answered hello with %q", m.Type)
	}
	return c, m.Heartbeat, nil
}
