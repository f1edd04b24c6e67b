package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/store"
)

// testdata is package server's test data, which these tests share.
const testdata = "../testdata"

// harness is a control node on loopback with a copy of testdata/project,
// and SSH keys for the identities its configuration names.
type harness struct {
	t       testing.TB
	dir     string
	project string
	cfgPath string
	srv     *server.Server
	door    *sshd.Door
	addr    string
	keys    map[string]gossh.Signer
	pems    map[string][]byte     // each identity's private key, OpenSSH PEM (for the ssh binary)
	logger  *slog.Logger          // the server's operator log; nil discards it
	tune    func(*server.Options) // changes the Options of every start; may be nil
}

// identities of the test configuration: people with roles and agents.
var testPeople = map[string]string{
	"alice": `["launch", "approve"]`,
	"bob":   `["approve"]`,
	"carol": `["launch"]`,
	"dave":  `["approve"]`, // an approver whom rules that name approvers leave out
}
var testAgents = []string{"deploy-bot", "helper-bot"}

// newHarness writes a configuration (server, project, users, agents, plus
// extra blocks) and starts a server on a free loopback port.
func newHarness(t *testing.T, extra string) *harness {
	t.Helper()
	return newHarnessWith(t, "", extra)
}

// newHarnessWith is newHarness with more lines for the server block.
func newHarnessWith(t *testing.T, serverExtra, extra string) *harness {
	t.Helper()
	h := writeHarness(t, serverExtra, extra)
	h.start()
	return h
}

// writeHarness is newHarnessWith without the start.
func writeHarness(t testing.TB, serverExtra, extra string) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, project: filepath.Join(dir, "project"), keys: map[string]gossh.Signer{}, pems: map[string][]byte{}}
	if err := os.CopyFS(h.project, os.DirFS(testdata+"/project")); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = %q\n  cancel_grace = \"5s\"\n%s}\n", filepath.Join(dir, "data"), serverExtra)
	fmt.Fprintf(&cfg, "project \"infra\" {\n  path = %q\n}\n", h.project)
	for name, roles := range testPeople {
		fmt.Fprintf(&cfg, "user %q {\n  public_key = %q\n  roles = %s\n}\n", name, h.newKey(name), roles)
	}
	for _, name := range testAgents {
		fmt.Fprintf(&cfg, "agent %q {\n  public_key = %q\n}\n", name, h.newKey(name))
	}
	cfg.WriteString(extra)
	h.cfgPath = filepath.Join(dir, "switchtender.hcl")
	if err := os.WriteFile(h.cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) newKey(name string) string {
	k := testkit.NewKey(h.t)
	h.keys[name] = k.Signer
	h.pems[name] = k.PEM
	return k.Line
}

// keyFile writes user's private key to a file of its own (mode 0600) for
// the OpenSSH client's -i and returns its path.
func (h *harness) keyFile(user string) string {
	h.t.Helper()
	pem, ok := h.pems[user]
	if !ok {
		h.t.Fatalf("no key for %s", user)
	}
	file := filepath.Join(h.t.TempDir(), user+".key")
	if err := os.WriteFile(file, pem, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return file
}

// start loads the configuration and starts a control node on it, composed
// as cmd/switchtender composes one: the service, then its front door on
// the configured address, attached to the service.
func (h *harness) start() {
	h.t.Helper()
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		h.t.Fatalf("loading test configuration: %v", err)
	}
	opts := server.Options{Environ: testkit.Environ(), Logger: h.logger}
	if h.tune != nil {
		h.tune(&opts)
	}
	srv, err := server.New(cfg, opts)
	if err != nil {
		h.t.Fatalf("starting server: %v", err)
	}
	if err := srv.Start(context.Background()); err != nil {
		h.t.Fatalf("starting server: %v", err)
	}
	door, err := sshd.New(srv)
	if err != nil {
		srv.Close()
		h.t.Fatalf("building the front door: %v", err)
	}
	if err := door.Listen(); err != nil {
		srv.Close()
		h.t.Fatalf("starting the front door: %v", err)
	}
	srv.Attach(door)
	h.srv, h.door = srv, door
	h.addr = srv.SSHAddr()
	h.t.Cleanup(func() { h.stop() })
}

// stop closes the front door, then the service, as the control node does.
func (h *harness) stop() {
	if h.door != nil {
		h.door.Close()
		h.door = nil
	}
	if h.srv != nil {
		h.srv.Close()
		h.srv = nil
	}
}

// restart stops the server and starts a new one on the same data directory.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// db is the store of the running server.
func (h *harness) db() *store.DB { return h.srv.Store() }

// ssh runs one command over a real SSH connection as user and returns its
// stdout, stderr and exit status.
func (h *harness) ssh(user string, args ...string) (string, string, int) {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatalf("ssh %s: %v", user, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		h.t.Fatalf("ssh session: %v", err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	code := 0
	if err := sess.Run(testkit.ShellJoin(args)); err != nil {
		var ee *gossh.ExitError
		if !errors.As(err, &ee) {
			h.t.Fatalf("ssh %s %v: %v", user, args, err)
		}
		code = ee.ExitStatus()
	}
	return out.String(), errOut.String(), code
}

// dialAs opens an SSH connection to the harness's server with user's key.
func dialAs(h *harness, user string) (*gossh.Client, error) {
	signer, ok := h.keys[user]
	if !ok {
		return nil, fmt.Errorf("no key for %s", user)
	}
	return testkit.Dial(h.addr, user, signer)
}

// mustSSH is ssh that fails the test on a non-zero exit.
func (h *harness) mustSSH(user string, args ...string) string {
	h.t.Helper()
	out, errOut, code := h.ssh(user, args...)
	if code != 0 {
		h.t.Fatalf("ssh %s %v: exit %d\nstdout:\n%s\nstderr:\n%s", user, args, code, out, errOut)
	}
	return out
}

// waitStatus polls the store until run id reaches one of statuses.
func (h *harness) waitStatus(id string, statuses ...store.Status) {
	h.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		r, err := h.db().GetRun(id)
		if err == nil {
			for _, s := range statuses {
				if r.Status == s {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	r, _ := h.db().GetRun(id)
	h.t.Fatalf("run %s is %s (%s), want one of %v", id, r.Status, r.Message, statuses)
}

// runPath is the PATH the harness's runs get.
func (h *harness) runPath() string {
	path := ""
	for _, e := range testkit.Environ() {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	return path
}

// dataFiles lists every regular file under the data directory.
func (h *harness) dataFiles() []string {
	var files []string
	filepath.WalkDir(filepath.Join(h.dir, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, what, d, cond)
}
