package testkit

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchtender/switchtender/server/sshd"
	"github.com/switchtender/switchtender/tui"
	gossh "golang.org/x/crypto/ssh"
)

// PTYTerm is one console session over a real SSH connection with a
// terminal: keystrokes go to the session's stdin and everything the server
// draws is kept as it arrives.
type PTYTerm struct {
	t      testing.TB
	user   string
	client *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	w, h   int

	mu  sync.Mutex
	out bytes.Buffer
}

// OpenConsole opens a session on client (logged in as user), asks for an
// xterm-256color PTY of w columns and hgt rows and starts a shell: the
// control node answers with the TUI. It closes when the test ends.
func OpenConsole(t testing.TB, client *gossh.Client, user string, w, hgt int) *PTYTerm {
	t.Helper()
	sess, err := client.NewSession()
	if err != nil {
		client.Close()
		t.Fatalf("ssh session: %v", err)
	}
	term := &PTYTerm{t: t, user: user, client: client, sess: sess, w: w, h: hgt}
	if err := sess.RequestPty("xterm-256color", hgt, w, gossh.TerminalModes{gossh.ECHO: 0}); err != nil {
		t.Fatalf("requesting a PTY: %v", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if term.stdin, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
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
		t.Fatalf("starting the console: %v", err)
	}
	t.Cleanup(term.Close)
	return term
}

// Close ends the session and its connection.
func (p *PTYTerm) Close() {
	p.sess.Close()
	p.client.Close()
}

// Keys types raw terminal input: "\r" is enter, "\t" tab, "\x1b[C" right.
func (p *PTYTerm) Keys(ks ...string) {
	p.t.Helper()
	for _, k := range ks {
		if _, err := io.WriteString(p.stdin, k); err != nil {
			p.t.Fatalf("typing %q as %s: %v", k, p.user, err)
		}
		// One key per read: an escape sequence is not merged with the next key.
		time.Sleep(60 * time.Millisecond)
	}
}

// Screen returns the text of the last full frame the server drew and what
// it drew after it. It first asks for a full repaint: a window change of the
// same size makes Bubble Tea erase and redraw everything, so text that only
// changed in part (a status word sharing a prefix) is seen whole.
func (p *PTYTerm) Screen() string {
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
	return ScreenText(raw)
}

// WaitFor polls the screen until every one of texts is on it and returns
// that screen; it fails the test with the last screen after the deadline.
func (p *PTYTerm) WaitFor(d time.Duration, texts ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var s string
	for {
		s = p.Screen()
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

// ScreenText turns terminal output into searchable text: escape sequences
// are removed, cursor positioning becomes a line break, and the renderer's
// compressions (REP repeats the previous character, ECH and CUF leave
// blanks) are expanded so words are whole.
func ScreenText(raw string) string {
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

// ConsoleRun is run id's detail as c shows it; it fails the test on error.
func ConsoleRun(t testing.TB, c *sshd.Console, id string) tui.RunDetail {
	t.Helper()
	d, err := c.Run(context.Background(), id)
	if err != nil {
		t.Fatalf("console Run(%s) as %s: %v", id, c.Identity().Name, err)
	}
	return d
}

// Raw is everything the server drew so far, escape sequences and all.
func (p *PTYTerm) Raw() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}
