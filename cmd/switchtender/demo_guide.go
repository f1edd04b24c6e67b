package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/exec/tofubin"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// demoListen is the address the demo will listen on: --listen when given,
// else the ssh_listen of a demo configuration written earlier (read, never
// written), else the flag's default.
func demoListen(dir, flagValue string, given bool) string {
	if given {
		return flagValue
	}
	if cfg, err := config.Load(filepath.Join(dir, "switchtender.hcl")); err == nil && cfg.Server.SSHListen != "" {
		return cfg.Server.SSHListen
	}
	return flagValue
}

// portFree refuses an address another process listens on, naming the port
// and --listen, before the demo writes anything.
func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l.Close()
	}
	_, port := splitHostPort(addr)
	next := "2223"
	if n, perr := strconv.Atoi(port); perr == nil && n < 65535 {
		next = strconv.Itoa(n + 1)
	}
	host, _ := splitHostPort(addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("port %s on %s is in use (another demo or server?); stop that, or give the demo another address with --listen %s:%s. Nothing was written", port, host, host, next)
	}
	return fmt.Errorf("cannot listen on %s: %w; give the demo another address with --listen HOST:PORT. Nothing was written", addr, err)
}

// nextRunNumber is the number the store will give the next run: one more
// than the highest run there, 1 for a new store (or one it cannot read).
func nextRunNumber(dataDir string) int {
	path := filepath.Join(dataDir, "switchtender.db")
	if _, err := os.Stat(path); err != nil {
		return 1
	}
	db, err := store.Open(path)
	if err != nil {
		return 1
	}
	defer db.Close()
	runs, err := db.ListRuns()
	if err != nil {
		return 1
	}
	highest := 0
	for _, r := range runs {
		if n, err := strconv.Atoi(r.ID); err == nil && n > highest {
			highest = n
		}
	}
	return highest + 1
}

// ownKeyIn returns the file name of the first ~/.ssh/id_*.pub key that the
// demo's launcher ("you") holds, or "" when there is none.
func ownKeyIn(cfg *config.Config) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	for _, n := range []string{"id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub"} {
		b, err := os.ReadFile(filepath.Join(home, ".ssh", n))
		if err != nil {
			continue
		}
		k, _, _, _, err := ssh.ParseAuthorizedKey(b)
		if err != nil {
			continue
		}
		if name, agent, ok := cfg.Identify(k); ok && !agent && name == "you" {
			return "~/.ssh/" + n
		}
	}
	return ""
}

// guide is what the demo prints once it serves: how to connect, and the
// tour with the run numbers the store will give.
type guide struct {
	addr, dir, sshConfig string
	next                 int    // the number of the tour's first run
	ownKey               string // the user's own key the launcher holds, or ""
}

// write prints the guide.
func (g guide) write(w io.Writer) {
	ssh := "ssh -F " + g.sshConfig
	own := ""
	if g.ownKey != "" {
		host, port := splitHostPort(g.addr)
		own = fmt.Sprintf(";\nyour own %s is that user's too, so `ssh -p %s %s runs` works without -F", g.ownKey, port, host)
	}
	n := func(i int) string { return strconv.Itoa(g.next + i) }
	fmt.Fprintf(w, `Switchtender demo is serving SSH on %s (OpenTofu %s, data in %s).
%s has two hosts: "launcher" (user "you", who launches%s)
and "approver" (user "approver", who approves).

The spec's example, a dry run and then a real run (runs %s and %s, if nothing else runs meanwhile):
  %s launcher launch network --dry-run --var region=eu-west-1 --wait
  %s launcher launch network --var region=eu-west-1 --wait
  %s launcher runs
  %s launcher show %s
  %s launcher log %s

A plan that destroys is held for the approver (rule no-surprise-destroys; runs %s and %s):
  %s launcher launch data --wait
  %s launcher launch data --var instances=1 --wait
  %s approver runs --status awaiting_approval   (what waits for a person)
  %s approver show %s                         (the plan, what it destroys, its digest)
  %s approver show %s --changes               (what it replaces, deletes, forgets and changes, risk first)
  %s approver approve %s --digest sha256:...  (releases exactly that plan)

The console, with a terminal:
  %s -t approver

Stop with Ctrl+C; run the same command again and the runs, logs and state are still there.
`, g.addr, tofubin.Version, g.dir, g.sshConfig, own, n(0), n(1),
		ssh, ssh, ssh, ssh, n(1), ssh, n(0),
		n(2), n(3), ssh, ssh, ssh, ssh, n(3), ssh, n(3), ssh, n(3), ssh)
}
