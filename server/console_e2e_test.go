package server

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	gossh "golang.org/x/crypto/ssh"
)

// ptyTerm is one console session over a real SSH connection with a
// terminal: keystrokes go to the session's stdin and everything the server
// draws is kept as it arrives.
type ptyTerm struct {
	t      *testing.T
	user   string
	client *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	w, h   int

	mu  sync.Mutex
	out bytes.Buffer
}

// openConsole dials the harness as user, asks for an xterm-256color PTY of
// w columns and h rows and starts a shell: the server answers with the TUI.
func openConsole(h *harness, user string, w, hgt int) *ptyTerm {
	h.t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		h.t.Fatalf("ssh %s: %v", user, err)
	}
	sess, err := client.NewSession()
	if err != nil {
		client.Close()
		h.t.Fatalf("ssh session: %v", err)
	}
	term := &ptyTerm{t: h.t, user: user, client: client, sess: sess, w: w, h: hgt}
	if err := sess.RequestPty("xterm-256color", hgt, w, gossh.TerminalModes{gossh.ECHO: 0}); err != nil {
		h.t.Fatalf("requesting a PTY: %v", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if term.stdin, err = sess.StdinPipe(); err != nil {
		h.t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := stdout.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	if err := sess.Shell(); err != nil {
		h.t.Fatalf("starting the console: %v", err)
	}
	h.t.Cleanup(term.close)
	return term
}

func (p *ptyTerm) close() {
	p.sess.Close()
	p.client.Close()
}

// keys types raw terminal input: "\r" is enter, "\t" tab, "\x1b[C" right.
func (p *ptyTerm) keys(ks ...string) {
	p.t.Helper()
	for _, k := range ks {
		if _, err := io.WriteString(p.stdin, k); err != nil {
			p.t.Fatalf("typing %q as %s: %v", k, p.user, err)
		}
		// One key per read: an escape sequence is not merged with the next key.
		time.Sleep(60 * time.Millisecond)
	}
}

// screen returns the text of the last full frame the server drew and what
// it drew after it. It first asks for a full repaint: a window change of the
// same size makes Bubble Tea erase and redraw everything, so text that only
// changed in part (a status word sharing a prefix) is seen whole.
func (p *ptyTerm) screen() string {
	p.t.Helper()
	if err := p.sess.WindowChange(p.h, p.w); err != nil {
		p.t.Fatalf("window change: %v", err)
	}
	time.Sleep(150 * time.Millisecond)
	p.mu.Lock()
	raw := p.out.String()
	p.mu.Unlock()
	if i := strings.LastIndex(raw, "\x1b[2J"); i >= 0 {
		raw = raw[i:]
	}
	return screenText(raw)
}

// waitFor polls the screen until every one of texts is on it and returns
// that screen; it fails the test with the last screen after the deadline.
func (p *ptyTerm) waitFor(d time.Duration, texts ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var s string
	for {
		s = p.screen()
		missing := ""
		for _, t := range texts {
			if !strings.Contains(s, t) {
				missing = t
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s's console never showed %q within %s; last screen:\n%s", p.user, missing, d, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// screenText turns terminal output into searchable text: escape sequences
// are removed, cursor positioning becomes a line break, and the renderer's
// compressions (REP repeats the previous character, ECH and CUF leave
// blanks) are expanded so words are whole.
func screenText(raw string) string {
	var b strings.Builder
	var prev rune = ' '
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == 0x1b:
			n, ok := escapeText(&b, raw, i, prev)
			if !ok {
				return b.String()
			}
			i = n
		case c == '\n':
			b.WriteByte('\n')
			i++
		case c < 0x20 || c == 0x7f:
			i++ // '\r' and other controls
		default:
			r, size := utf8.DecodeRuneInString(raw[i:])
			b.WriteRune(r)
			prev = r
			i += size
		}
	}
	return b.String()
}

// escapeText handles the escape sequence at raw[i] (see csiText) and
// returns the index after it; ok is false for an unfinished one.
func escapeText(b *strings.Builder, raw string, i int, prev rune) (next int, ok bool) {
	if i+1 >= len(raw) {
		return i + 2, true
	}
	switch raw[i+1] {
	case '[':
		return csiText(b, raw, i, prev)
	case ']', 'P', '_':
		return stringEnd(raw, i), true
	}
	return i + 2, true
}

// csiText writes what the CSI sequence at raw[i] leaves on the screen as
// text (a line break for cursor positioning, repeats and blanks expanded)
// and returns the index after it; ok is false for an unfinished sequence.
func csiText(b *strings.Builder, raw string, i int, prev rune) (next int, ok bool) {
	j := i + 2
	for j < len(raw) && (raw[j] < 0x40 || raw[j] > 0x7e) {
		j++
	}
	if j >= len(raw) {
		return j, false
	}
	params, final := raw[i+2:j], raw[j]
	n, err := strconv.Atoi(params)
	if err != nil || n < 1 {
		n = 1
	}
	switch final {
	case 'H', 'f', 'd', 'A', 'B', 'E', 'F':
		b.WriteByte('\n')
	case 'b':
		b.WriteString(strings.Repeat(string(prev), n))
	case 'X', 'C', 'G', '`':
		b.WriteString(strings.Repeat(" ", min(n, 500)))
	}
	return j + 1, true
}

// stringEnd returns the index after the OSC, DCS or APC string at raw[i]:
// up to BEL or ST.
func stringEnd(raw string, i int) int {
	j := i + 2
	for j < len(raw) && raw[j] != 0x07 && !(raw[j] == 0x1b && j+1 < len(raw) && raw[j+1] == '\\') {
		j++
	}
	if j < len(raw) && raw[j] == 0x1b {
		j++
	}
	return j + 1
}

func TestScreenTextExpandsTheRenderersShorthand(t *testing.T) {
	raw := "\x1b[H\x1b[2J\x1b[1;31mDESTROYS 2\x1b[m\x1b[3;1Hdigest: sha256:ab\x1b[4b9\x1b[5;2Hx\x1b[3Xy\x1b]0;title\x07z"
	got := screenText(raw)
	for _, want := range []string{"DESTROYS 2", "digest: sha256:abbbbb9", "x   y", "z"} {
		if !strings.Contains(got, want) {
			t.Errorf("screenText = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, "title") || strings.Contains(got, "\x1b") {
		t.Errorf("screenText kept control text: %q", got)
	}
}

// heldDestroyingTwo checks, through `show`, that run 2 is held, destroys 2
// and was launched with the launcher's instances = 1; it returns the digest.
func heldDestroyingTwo(h *harness) string {
	h.t.Helper()
	v := h.show("bob", "2")
	if Status(v.Status) != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Destroy != 2 {
		h.t.Fatalf("run 2 = %s, proposal %+v", v.Status, v.Proposal)
	}
	if got := v.Vars["instances"]; got != "1" {
		h.t.Fatalf("run 2 was launched with instances = %q, want 1 from the launcher's form", got)
	}
	digest := v.Proposal.Digest
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		h.t.Fatalf("digest = %q", digest)
	}
	return digest
}

// The check, end to end through real SSH connections with a
// terminal and real OpenTofu: a launcher starts a destroying apply from the
// console's launcher with a survey answer and watches its log; the approver
// sees it waiting for them, with the destroy count and the digest `show`
// reports, approves with a confirmation and watches the apply finish; the
// state then holds what the approved plan said.
func TestConsoleLaunchesAndApprovesAHeldApplyOverSSH(t *testing.T) {
	h := newHarness(t, dataTemplates+`
rule "no-destroys" {
  templates   = ["data"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	// State with 3 instances; creating destroys nothing, so it is not held.
	out := h.mustSSH("carol", "launch", "data", "--wait")
	if !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("first apply did not succeed:\n%s", out)
	}
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers, want 3", n)
	}

	// carol launches instances=1 as a real run from the launcher.
	carol := openConsole(h, "carol", 120, 40)
	carol.waitFor(30*time.Second, "Switchtender · runs", "signed in as carol (launch)", "succeeded")
	carol.keys("n")
	carol.waitFor(10*time.Second, "launch a run", "data", "data-free")
	carol.keys("\r") // the cursor starts on "data", the first template
	carol.waitFor(10*time.Second, "Launch · data", "instances (number)", "generation (string)", "dry run (plan only)")
	// instances: to the end of the default "3", erase it, type 1; then to
	// the run kind, one step right from "dry run" to "real run", then to the
	// launch button.
	carol.keys("\x05", "\x7f", "1", "\t", "\t")
	carol.keys("\x1b[C")
	carol.waitFor(10*time.Second, "real run (apply)")
	carol.keys("\t", "\r")
	// The launcher opens the new run; its log streams, then the proposal
	// (carol may not approve it: she has no approve role).
	carol.waitFor(time.Minute, "Run 2 · data · apply", "status: awaiting_approval", "DESTROYS 2")
	carol.keys("\t") // from the proposal pane to the log
	carol.waitFor(10*time.Second, "2 to destroy", "end of log")

	digest := heldDestroyingTwo(h)

	bob := openConsole(h, "bob", 120, 40)
	s := bob.waitFor(30*time.Second, "signed in as bob (approve)", "1 run is waiting for you", "▶ YOU")
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "▶ YOU") && !strings.Contains(line, "data") {
			t.Errorf("the waiting mark is not on the data run: %q", line)
		}
	}
	// Runs are newest first: run 2 is under the cursor.
	bob.keys("\r")
	s = bob.waitFor(30*time.Second, "Run 2 · data · apply", "▶ waiting for you", "DESTROYS 2", "digest: "+digest,
		"held by: no-destroys → bob", "terraform_data.server[1]", "terraform_data.server[2]")
	if !strings.Contains(s, "requester: carol") {
		t.Errorf("the held apply does not say who asked:\n%s", s)
	}
	bob.keys("a")
	s = bob.waitFor(10*time.Second, "Release this proposal of run 2?", "y release this digest")
	if !strings.Contains(s, digest) {
		t.Fatalf("the confirmation does not show the digest being released:\n%s", s)
	}
	bob.keys("y")
	bob.waitFor(time.Minute, "released "+digest, "status: succeeded")

	r, err := h.srv.db.GetRun("2")
	if err != nil {
		t.Fatal(err)
	}
	if Status(r.Status) != StatusSucceeded {
		t.Fatalf("run 2 is %s (%s)", r.Status, r.Message)
	}
	if n := h.stateCount(); n != 1 {
		t.Fatalf("after the approved apply the state holds %d servers, want 1", n)
	}
	// The launcher's console followed the same run to its end.
	carol.waitFor(30*time.Second, "status: succeeded")
	// The run's log holds the apply of the released plan: back to the list
	// (the cursor stays on run 2), open it again, switch to the log.
	bob.keys("\x1b")
	bob.waitFor(10*time.Second, "Switchtender · runs")
	bob.keys("\r")
	bob.waitFor(10*time.Second, "Run 2 · data · apply", "[Proposal]")
	bob.keys("\t")
	bob.waitFor(10*time.Second, "Apply complete! Resources: 0 added, 0 changed, 2 destroyed.", "end of log")
}
