package scenario

import (
	"bytes"
	"context"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// weighConfig is template "weigh" over infra/weigh, whose survey sets the
// generation that terraform_data.a is replaced by, and a rule holding any
// plan of it that destroys something for bob.
const weighConfig = `
template "weigh" {
  project = "infra"
  command = "infra/weigh"
  survey "generation" {
    type    = "string"
    default = "1"
  }
}
rule "no-destroys" {
  templates   = ["weigh"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// weighFirst is infra/weigh as first applied: three terraform_data
// resources (no provider to download).
const weighFirst = `
variable "generation" {
  type = string
}

resource "terraform_data" "a" {
  input            = "a"
  triggers_replace = [var.generation]
}

resource "terraform_data" "b" {
  input = "kept in the real world"
}

resource "terraform_data" "c" {
  input = "c-1"
}
`

// weighSecond is the checkout changed: b is removed from state without
// being destroyed, c's input changes in place; a new generation (from the
// survey) forces a's replacement.
const weighSecond = `
variable "generation" {
  type = string
}

resource "terraform_data" "a" {
  input            = "a"
  triggers_replace = [var.generation]
}

removed {
  from = terraform_data.b
  lifecycle {
    destroy = false
  }
}

resource "terraform_data" "c" {
  input = "c-2"
}
`

// weighRiskLines are the change view's lines of what is at risk in the held
// plan, in the order the view must give them: the destroy count (the
// replace), what leaves state counted apart, then the replace with why and
// what forces it, then the forget under a heading saying it leaves state.
var weighRiskLines = []string{
	"Destroys 1 (1 replaced, 0 deleted)",
	"Leaves state, not destroyed: 1 (1 forgotten, 0 forgotten then created)",
	"Also: 1 updated",
	"Replaced (1): destroyed, then created again",
	"-/+ terraform_data.a",
	"why: a change that cannot be made in place", // replace_because_cannot_update
	"forced by: triggers_replace",
	"Forgotten (1): leaves state, not destroyed",
	"forget terraform_data.b",
}

// The approver's path with the OpenSSH client itself: an apply that
// replaces one resource (forced by triggers_replace), forgets another
// (a removed block with destroy = false) and updates a third is held by a
// max_destroy = 0 rule. `ssh … show N --changes` lists the replace first,
// with its reason and forcing attribute, and the forget in a section of
// its own that says it leaves state, counted apart from the one destroy;
// the console, opened by `ssh -tt` in a pseudo-terminal of 80x24, shows
// the same on the first screen of the held run. It guards the risk-first
// view end to end: the plan OpenTofu saved, the change set the server
// built of it, and both doors an approver reads it through.
func TestAnApproverWeighsAReplaceAndAForgetOverOpenSSH(t *testing.T) {
	t.Parallel()
	if _, err := osexec.LookPath("ssh"); err != nil {
		t.Skip("skipping the approver's path over OpenSSH: the OpenSSH client ssh is not installed")
	}
	h := writeHarness(t, "", weighConfig)
	dir := filepath.Join(h.project, "infra", "weigh")
	testkit.WriteFiles(t, dir, map[string]string{"main.tf": weighFirst})
	h.start()
	if out := h.mustSSH("carol", "launch", "weigh", "--wait"); !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("the first apply (it destroys nothing) did not succeed:\n%s", out)
	}

	testkit.WriteFiles(t, dir, map[string]string{"main.tf": weighSecond})
	id := runIDOf(t, h.mustSSH("carol", "launch", "weigh", "--var", "generation=2", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed, store.StatusSucceeded)
	if v := h.show("bob", id); v.Run.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Destroy != 1 {
		t.Fatalf("run %s = %s (%s), proposal %+v; want it held destroying 1\n%s", id, v.Status, v.Message, v.Proposal, h.mustSSH("bob", "log", id))
	}

	changes := opensshRun(t, h, "bob", "show", id, "--changes")
	assertRiskFirst(t, "`ssh show "+id+" --changes`", changes, weighRiskLines)
	assertWholeChangeSet(t, changes)

	bob := openConsoleOverOpenSSH(t, h, "bob", 80, 24)
	bob.waitFor(30*time.Second, "signed in as bob (approve)", "1 run is waiting for you")
	bob.keys("\r") // runs are newest first: the held run is under the cursor
	screen := bob.waitFor(30*time.Second, append([]string{"Run " + id + " · weigh · apply", "[Proposal]"}, weighRiskLines...)...)
	assertRiskFirst(t, "the console's first screen of run "+id+" at 80x24", screen, weighRiskLines)
	for _, l := range weighRiskLines {
		if !hasLine(changes, l) {
			t.Errorf("the console shows %q, which `show --changes` does not", l)
		}
	}
	for _, want := range []string{"DESTROYS 1", "held by: no-destroys → bob", "digest: " + h.show("bob", id).Proposal.Digest, "> ▸ -/+ terraform_data.a"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the console's first screen lacks %q:\n%s", want, screen)
		}
	}
	// Enter unfolds the replace under the cursor: the value that forces it.
	bob.keys("\r")
	screen = bob.waitFor(10*time.Second, "▾ -/+ terraform_data.a", `~ triggers_replace[0] = "1" -> "2" (forces replacement)`)
	if f, r := strings.Index(screen, "Forgotten (1)"), strings.Index(screen, "triggers_replace[0]"); f >= 0 && f < r {
		t.Errorf("the unfolded replace does not come before the forget:\n%s", screen)
	}
}

// assertRiskFirst checks that text (a door's rendering of the held plan)
// gives lines in order, the replace before any other change, and no
// forget as a destroy.
func assertRiskFirst(t *testing.T, door, text string, lines []string) {
	t.Helper()
	at := 0
	for _, l := range lines {
		i := strings.Index(text[at:], l)
		if i < 0 {
			t.Errorf("%s lacks %q after what comes before it:\n%s", door, l, text)
			return
		}
		at += i + len(l)
	}
	replace := strings.Index(text, "-/+ terraform_data.a")
	for _, other := range []string{"terraform_data.b", "terraform_data.c"} {
		if i := strings.Index(text, other); i >= 0 && i < replace {
			t.Errorf("%s names %s before the replace:\n%s", door, other, text)
		}
	}
	if strings.Contains(text, "Deleted (") || strings.Contains(text, "- terraform_data.b") {
		t.Errorf("%s counts the forget as a delete:\n%s", door, text)
	}
}

// assertWholeChangeSet checks what `show --changes` adds to the first
// screen: the replace's forcing attribute with its values inside the
// replace's section, and the update after the forget.
func assertWholeChangeSet(t *testing.T, text string) {
	t.Helper()
	force := strings.Index(text, `~ triggers_replace[0] = "1" -> "2" (forces replacement)`)
	forgotten := strings.Index(text, "Forgotten (1)")
	if force < 0 || force > forgotten {
		t.Errorf("the replace's section does not show triggers_replace changing and forcing it:\n%s", text)
	}
	update := strings.Index(text, "Updated in place (1)")
	if update < forgotten || !strings.Contains(text[max(update, 0):], "~ terraform_data.c") ||
		!strings.Contains(text, `~ input = "c-1" -> "c-2"`) {
		t.Errorf("the update of terraform_data.c is not shown after the forget:\n%s", text)
	}
}

// hasLine reports whether one of text's lines, without its indentation,
// is l.
func hasLine(text, l string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == l {
			return true
		}
	}
	return false
}

// opensshArgs are the OpenSSH client's arguments to reach the harness as
// user with the user's key and nothing of this machine's configuration,
// the host last.
func opensshArgs(h *harness, user string) []string {
	h.t.Helper()
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	return []string{"-F", "/dev/null", "-p", port, "-l", user, "-i", h.keyFile(user), "-o", "IdentitiesOnly=yes",
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", host}
}

// opensshEnv is the OpenSSH client's environment: no agent, a home of its
// own, and the terminal type the console is drawn for.
func opensshEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color", "LANG=C.UTF-8"}
}

// opensshRun runs one command over the OpenSSH client as user and returns
// its stdout; a failure or a minute without an answer fails the test.
func opensshRun(t *testing.T, h *harness, user string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "ssh", append(opensshArgs(h, user), args...)...)
	cmd.Env = opensshEnv(t)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("ssh %s %v: %v\nstdout:\n%s\nstderr:\n%s", user, args, err, out.String(), errOut.String())
	}
	return out.String()
}

// opensshConsole is the console as the OpenSSH client shows it: `ssh -tt`
// run in a pseudo-terminal of its own, everything it writes kept.
type opensshConsole struct {
	t    *testing.T
	user string
	cmd  *osexec.Cmd
	tty  *os.File // the pseudo-terminal's controlling side

	mu  sync.Mutex
	out bytes.Buffer
}

// openConsoleOverOpenSSH starts `ssh -tt` as user in a pseudo-terminal of
// cols x rows with TERM=xterm-256color: the server answers with the TUI.
// The client is killed when the test ends.
func openConsoleOverOpenSSH(t *testing.T, h *harness, user string, cols, rows uint16) *opensshConsole {
	t.Helper()
	cmd := osexec.Command("ssh", append([]string{"-tt"}, opensshArgs(h, user)...)...)
	cmd.Env = opensshEnv(t)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		t.Fatalf("starting ssh -tt in a pseudo-terminal: %v", err)
	}
	c := &opensshConsole{t: t, user: user, cmd: cmd, tty: tty}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
		<-done
	})
	return c
}

// keys types raw terminal input ("\r" is enter).
func (c *opensshConsole) keys(k string) {
	c.t.Helper()
	if _, err := c.tty.WriteString(k); err != nil {
		c.t.Fatalf("typing %q into %s's ssh: %v", k, c.user, err)
	}
}

// frame is the text of the last full frame the server drew and what it
// drew after it (testkit.ScreenText), or "" before any full frame.
func (c *opensshConsole) frame() string {
	c.mu.Lock()
	raw := c.out.String()
	c.mu.Unlock()
	i := strings.LastIndex(raw, "\x1b[2J")
	if i < 0 {
		return ""
	}
	return testkit.ScreenText(raw[i:])
}

// waitFor asks for full frames until one shows every one of texts and
// returns it; it fails the test with the last frame after d. A SIGWINCH
// makes ssh send a window change of the same size, on which the console
// erases and draws everything again.
func (c *opensshConsole) waitFor(d time.Duration, texts ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := c.cmd.Process.Signal(syscall.SIGWINCH); err != nil {
			c.t.Fatalf("%s's ssh is gone: %v\n%s", c.user, err, testkit.ScreenText(c.raw()))
		}
		<-tick.C
		s := c.frame()
		missing := ""
		for _, want := range texts {
			if !strings.Contains(s, want) {
				missing = want
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s's console over OpenSSH never showed %q within %s; last frame:\n%s", c.user, missing, d, s)
		}
	}
}

// raw is everything ssh wrote so far.
func (c *opensshConsole) raw() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}
