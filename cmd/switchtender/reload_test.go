package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `switchtender reload` on the real binary: a user added to the file can
// connect without a restart; a broken file sent with SIGHUP changes
// nothing (the added user still gets in, a user the broken file would
// drop too) and the refusal is in the log; `reload` itself refuses a
// broken file without signalling.
func TestReloadCommandAndBrokenSIGHUP(t *testing.T) {
	n := newNode(t)
	if _, _, code := n.ssh("bob", "runs"); code != 0 {
		t.Fatal("bob cannot connect")
	}
	good, _ := os.ReadFile(n.cfgPath)
	withErin := string(good) + fmt.Sprintf("user \"erin\" {\n  public_key = %q\n  roles = [\"launch\"]\n}\n", n.newKey("erin"))
	os.WriteFile(n.cfgPath, []byte(withErin), 0o600)
	out, code := runBinary(t, "reload", "--config", n.cfgPath)
	if code != 0 || !strings.Contains(out, "reloaded") {
		t.Fatalf("reload: exit %d\n%s", code, out)
	}
	n.waitServerLog("reload: the configuration was replaced")
	if _, errOut, code := n.ssh("erin", "runs"); code != 0 {
		t.Fatalf("erin after the reload: exit %d %s", code, errOut)
	}
	broken := strings.Replace(withErin, "user \"bob\"", "user \"bob\" \"extra-label\"", 1)
	os.WriteFile(n.cfgPath, []byte(broken), 0o600)
	if out, code := runBinary(t, "reload", "--config", n.cfgPath); code != 1 || !strings.Contains(out, "nothing was reloaded") {
		t.Errorf("reload of a broken file: exit %d\n%s", code, out)
	}
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	n.waitServerLog("reload refused: the configuration does not load")
	for _, who := range []string{"erin", "bob"} {
		if _, errOut, code := n.ssh(who, "runs"); code != 0 {
			t.Errorf("%s after a broken reload: exit %d %s", who, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(n.data, pidFileName)); err != nil {
		t.Errorf("pid file: %v", err)
	}
}

// waitServerLog waits until the server's output holds text.
func (n *node) waitServerLog(text string) {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(n.logPath)
		if strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("the server never logged %q:\n%s", text, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
