package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// A busy port is refused before the demo writes anything (or builds
// OpenTofu), naming the port and --listen.
func TestDemoBusyPortWritesNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port := splitHostPort(l.Addr().String())
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errOut bytes.Buffer
	err = cmdDemo(context.Background(), []string{"--data", dir, "--listen", l.Addr().String()}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "port "+port+" ") || !strings.Contains(err.Error(), "--listen 127.0.0.1:") {
		t.Errorf("a busy port: %v", err)
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Errorf("the demo directory was made despite the busy port")
	}
	if out.Len() > 0 || errOut.Len() > 0 {
		t.Errorf("printed before refusing: %q %q", out.String(), errOut.String())
	}
}

// Without --listen, a demo started before listens where its configuration
// says, and that is the port checked.
func TestDemoListenComesFromItsConfiguration(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	if _, err := prepareDemo(dir, "127.0.0.1:2399"); err != nil {
		t.Fatal(err)
	}
	if got := demoListen(dir, "127.0.0.1:2222", false); got != "127.0.0.1:2399" {
		t.Errorf("demoListen = %s, want the configuration's", got)
	}
	if got := demoListen(dir, "127.0.0.1:2500", true); got != "127.0.0.1:2500" {
		t.Errorf("demoListen with --listen = %s", got)
	}
}

// The guide names the runs the store will give, and mentions the user's own
// key only when the launcher holds one.
func TestDemoGuide(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	cfg := loadDemo(t, dir)
	if got := ownKeyIn(cfg); got != "" {
		t.Errorf("ownKeyIn with no ~/.ssh = %q", got)
	}
	var out bytes.Buffer
	guide{addr: "127.0.0.1:2222", dir: dir, sshConfig: "c", next: nextRunNumber(cfg.Server.DataDir)}.write(&out)
	if strings.Contains(out.String(), "~/.ssh") || !strings.Contains(out.String(), "show 2\n") || !strings.Contains(out.String(), "approve 4 --digest") {
		t.Errorf("the guide of a new demo with no key of yours:\n%s", out.String())
	}

	db, err := store.Open(filepath.Join(cfg.Server.DataDir, "switchtender.db"))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := db.CreateRun(&store.Run{Template: "network", Status: "succeeded"}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if n := nextRunNumber(cfg.Server.DataDir); n != 6 {
		t.Errorf("nextRunNumber after 5 runs = %d", n)
	}

	writeUserKey(t, home)
	cfg = loadDemo(t, t.TempDir())
	out.Reset()
	guide{addr: "127.0.0.1:2222", dir: dir, sshConfig: "c", next: 6, ownKey: ownKeyIn(cfg)}.write(&out)
	for _, want := range []string{"your own ~/.ssh/id_ed25519.pub is that user's too", "show 7\n", "log 6\n", "approve 9 --digest"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the guide lacks %q:\n%s", want, out.String())
		}
	}
}

// loadDemo lays out a demo in dir and loads its configuration.
func loadDemo(t *testing.T, dir string) *config.Config {
	t.Helper()
	path, err := prepareDemo(dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// writeUserKey gives home an ~/.ssh/id_ed25519.pub.
func writeUserKey(t *testing.T, home string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), ssh.MarshalAuthorizedKey(k), 0o644); err != nil {
		t.Fatal(err)
	}
}
