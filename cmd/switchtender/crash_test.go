package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// binary is the switchtender binary built once for these tests; serverEnv
// is the environment it runs with, the pinned OpenTofu first on PATH.
var (
	binary    string
	serverEnv []string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	tofu, err := tofubin.Ensure(ctx, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "the crash tests need OpenTofu: %v\n", err)
		return 1
	}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PATH=") {
			serverEnv = append(serverEnv, e)
		}
	}
	serverEnv = append(serverEnv, "PATH="+tofubin.PathWith(tofu, os.Getenv("PATH")))

	dir, err := os.MkdirTemp("", "switchtender-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "switchtender")
	build := osexec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building switchtender: %v\n", err)
		return 1
	}
	return m.Run()
}

// node is a `switchtender serve` process on loopback with its own
// configuration, data directory and copy of testdata/project.
type node struct {
	t       *testing.T
	dir     string
	data    string
	project string
	cfgPath string
	logPath string
	keys    map[string]gossh.Signer
	cmd     *osexec.Cmd
	exited  chan error // receives the server process's exit
	addr    string
	env     []string // the server's environment; serverEnv when nil
	args    []string // more arguments for serve
}

// nodeOptions vary a node's configuration and environment; the zero value
// is newNode's.
type nodeOptions struct {
	maxParallel int      // the server's max_parallel, when not 0
	pathFirst   string   // a directory put first on the server's PATH
	extra       string   // configuration appended as is
	serverExtra string   // lines added to the server block
	args        []string // more arguments for serve
	env         []string // more environment for the server, NAME=value
}

func newNode(t *testing.T) *node {
	t.Helper()
	return newNodeWith(t, nodeOptions{})
}

func newNodeWith(t *testing.T, opts nodeOptions) *node {
	t.Helper()
	dir := t.TempDir()
	n := &node{
		t: t, dir: dir,
		data:    filepath.Join(dir, "data"),
		project: filepath.Join(dir, "project"),
		cfgPath: filepath.Join(dir, "switchtender.hcl"),
		logPath: filepath.Join(dir, "server.log"),
		keys:    map[string]gossh.Signer{},
		args:    opts.args,
	}
	if opts.pathFirst != "" {
		for _, e := range serverEnv {
			if p, ok := strings.CutPrefix(e, "PATH="); ok {
				e = "PATH=" + opts.pathFirst + string(os.PathListSeparator) + p
			}
			n.env = append(n.env, e)
		}
	}
	if len(opts.env) > 0 {
		base := n.env
		if base == nil {
			base = serverEnv
		}
		n.env = append(slices.Clone(base), opts.env...)
	}
	serverExtra := opts.serverExtra
	if opts.maxParallel > 0 {
		serverExtra += fmt.Sprintf("  max_parallel = %d\n", opts.maxParallel)
	}
	if err := os.CopyFS(n.project, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`server {
  ssh_listen   = "127.0.0.1:0"
  data_dir     = %q
  cancel_grace = "5s"
%s}
project "infra" {
  path = %q
}
template "data" {
  project = "infra"
  command = "infra/data"
  survey "instances" {
    type    = "number"
    default = 2
  }
}
template "slow" {
  project = "infra"
  command = "infra/slow"
}
rule "everything" {
  templates        = ["data", "slow"]
  require_approval = true
}
user "alice" {
  public_key = %q
  roles      = ["launch"]
}
user "bob" {
  public_key = %q
  roles      = ["approve"]
}
%s`, n.data, serverExtra, n.project, n.newKey("alice"), n.newKey("bob"), opts.extra)
	if err := os.WriteFile(n.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.kill()
		n.killOrphans()
		if t.Failed() {
			b, _ := os.ReadFile(n.logPath)
			t.Logf("server output:\n%s", b)
		}
	})
	n.start()
	return n
}

func (n *node) newKey(name string) string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		n.t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		n.t.Fatal(err)
	}
	n.keys[name] = signer
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))
}

// start runs `switchtender serve --config FILE` and waits until it says
// where it serves SSH. Its output is appended to server.log.
func (n *node) start() {
	n.t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.t.Fatal(err)
	}
	defer logf.Close()
	from, _ := logf.Seek(0, 2)
	cmd := osexec.Command(binary, append([]string{"serve", "--config", n.cfgPath}, n.args...)...)
	cmd.Env = serverEnv
	if n.env != nil {
		cmd.Env = n.env
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("starting switchtender serve: %v", err)
	}
	n.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(n.logPath)
		if int64(len(b)) > from {
			b = b[from:]
			if _, rest, ok := bytes.Cut(b, []byte("serving SSH on ")); ok {
				if addr, _, ok := bytes.Cut(rest, []byte(" ")); ok {
					n.addr = string(addr)
					n.exited = exited
					return
				}
			}
		}
		select {
		case err := <-exited:
			n.cmd = nil
			b, _ := os.ReadFile(n.logPath)
			n.t.Fatalf("switchtender serve exited before serving: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
	}
	n.t.Fatalf("switchtender serve did not start within a minute")
}

// kill sends the server SIGKILL (no chance to clean up, as in a crash) and
// waits until it is gone. Processes it started are left as a crash leaves
// them.
func (n *node) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		n.t.Errorf("the killed server did not exit")
	}
	n.cmd = nil
}

// leftovers are the processes (other than this test) that run inside the
// test's directory or name it in their arguments: what a killed server
// left running.
func (n *node) leftovers() map[int]string {
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		args := strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
		if strings.HasPrefix(cwd, n.dir) || strings.Contains(args, n.dir) {
			found[pid] = args
		}
	}
	return found
}

// killOrphans kills what a killed server left running (tofu runs in its
// own process group, so the group is killed too) and waits until none is
// left. It returns what it found.
func (n *node) killOrphans() map[int]string {
	found := n.leftovers()
	self := syscall.Getpgrp()
	for pid := range found {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid != self && pgid > 1 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(n.leftovers()) > 0 {
		if time.Now().After(deadline) {
			n.t.Errorf("processes left after killing them: %v", n.leftovers())
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return found
}

// ssh runs one command over SSH as user; it returns stdout, stderr and the
// exit status.
func (n *node) ssh(user string, args ...string) (string, string, int) {
	n.t.Helper()
	client, err := gossh.Dial("tcp", n.addr, &gossh.ClientConfig{
		User:            user,
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(n.keys[user])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		n.t.Fatalf("ssh %s: %v", user, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		n.t.Fatalf("ssh session: %v", err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	var quoted []string
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	code := 0
	if err := sess.Run(strings.Join(quoted, " ")); err != nil {
		var ee *gossh.ExitError
		if !errors.As(err, &ee) {
			n.t.Fatalf("ssh %s %v: %v", user, args, err)
		}
		code = ee.ExitStatus()
	}
	return out.String(), errOut.String(), code
}

func (n *node) mustSSH(user string, args ...string) string {
	n.t.Helper()
	out, errOut, code := n.ssh(user, args...)
	if code != 0 {
		n.t.Fatalf("ssh %s %v: exit %d\nstdout:\n%s\nstderr:\n%s", user, args, code, out, errOut)
	}
	return out
}

// runView is the part of `show RUN --json` these tests read.
type runView struct {
	ID       string
	Status   string
	Message  string
	Proposal *struct {
		Digest string
		Add    int
		Stage  string
	}
}

func (n *node) show(id string) runView {
	n.t.Helper()
	var v runView
	out := n.mustSSH("bob", "show", id, "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		n.t.Fatalf("show %s --json: %v\n%s", id, err, out)
	}
	return v
}

// waitStatus polls `show RUN` until the run reaches one of statuses.
func (n *node) waitStatus(id string, statuses ...string) runView {
	n.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		v := n.show(id)
		for _, s := range statuses {
			if v.Status == s {
				return v
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("run %s is %s (%s), want one of %v", id, v.Status, v.Message, statuses)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// planFiles lists every plaintext plan file under the data directory.
func (n *node) planFiles() []string {
	var files []string
	filepath.WalkDir(n.data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "plan.tfplan" || d.Name() == "plan.json") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// stateInstances is how many instances of resource name the local state of
// the working directory dir holds (0 without a state file).
func (n *node) stateInstances(dir, name string) int {
	n.t.Helper()
	b, err := os.ReadFile(filepath.Join(n.project, dir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		n.t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Name      string
			Instances []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		n.t.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Name == name {
			return len(r.Instances)
		}
	}
	return 0
}

// A server killed while a gated apply is held leaves no plaintext plan, and
// after a restart the held apply is still released by its digest and applies
// exactly what it planned.
func TestKilledWhileHeld(t *testing.T) {
	n := newNode(t)
	out := n.mustSSH("alice", "launch", "data", "--var", "instances=3", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	held := n.show("1")
	if held.Proposal == nil || held.Proposal.Add != 3 {
		t.Fatalf("proposal = %+v", held.Proposal)
	}
	n.kill()
	if files := n.planFiles(); len(files) > 0 {
		t.Errorf("plaintext plan under the data directory after a crash while held: %v", files)
	}
	n.start()
	if files := n.planFiles(); len(files) > 0 {
		t.Errorf("plaintext plan under the data directory after the restart: %v", files)
	}
	again := n.show("1")
	if again.Status != "awaiting_approval" || again.Proposal == nil || again.Proposal.Digest != held.Proposal.Digest {
		t.Fatalf("after the restart run 1 is %s %q with proposal %+v, want the same held plan %s", again.Status, again.Message, again.Proposal, held.Proposal.Digest)
	}
	if got := n.stateInstances("infra/data", "server"); got != 0 {
		t.Fatalf("the held plan was applied before its approval: %d servers", got)
	}
	n.mustSSH("bob", "approve", "1", "--digest", held.Proposal.Digest)
	v := n.waitStatus("1", "succeeded", "failed", "stale")
	if v.Status != "succeeded" {
		t.Fatalf("the approved plan after a restart: %s: %s\n%s", v.Status, v.Message, n.mustSSH("bob", "log", "1"))
	}
	if got := n.stateInstances("infra/data", "server"); got != 3 {
		t.Errorf("the state holds %d servers after the approved plan, want 3", got)
	}
	if files := n.planFiles(); len(files) > 0 {
		t.Errorf("plaintext plan left after the apply: %v", files)
	}
}

// A server killed while tofu applies an approved plan: after a restart no
// plaintext plan is left under the data directory, and the run is marked
// interrupted and not re-run (DESIGN invariants 2 and 6).
func TestKilledWhileApplying(t *testing.T) {
	n := newNode(t)
	out := n.mustSSH("alice", "launch", "slow", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("the apply was not held:\n%s", out)
	}
	n.mustSSH("bob", "approve", "1", "--digest", n.show("1").Proposal.Digest)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(n.mustSSH("bob", "log", "1"), "started-slow") {
		if time.Now().After(deadline) {
			t.Fatalf("the slow apply never started:\n%s", n.mustSSH("bob", "log", "1"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	n.kill()

	// Killed: the server can stop nothing now. The kernel interrupts tofu
	// (parent-death signal); what tofu started may run on until the next
	// start stops it.
	if files := n.planFiles(); len(files) == 0 {
		t.Errorf("no plaintext plan while tofu applied it; the wipe at restart is not exercised")
	}
	n.start()
	if files := n.planFiles(); len(files) > 0 {
		t.Errorf("plaintext plan under the data directory after the restart: %v", files)
	}
	v := n.show("1")
	if v.Status != "interrupted" || !strings.Contains(v.Message, "not re-run") {
		t.Errorf("run 1 after the restart: %s %q, want interrupted saying it was not re-run", v.Status, v.Message)
	}
	// The restart stopped what the killed server left running (the
	// provisioner's sleep 30 would still run), and nothing starts again on
	// its own.
	time.Sleep(2 * time.Second)
	left := n.leftovers()
	delete(left, n.cmd.Process.Pid)
	if len(left) > 0 {
		t.Errorf("processes running after the restart besides the server: %v", left)
		n.killOrphans()
	}
	if v := n.show("1"); v.Status != "interrupted" {
		t.Errorf("run 1 changed after the restart: %s %q", v.Status, v.Message)
	}
}
