package sshd

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/switchtender/switchtender/screentext"

	"github.com/switchtender/switchtender/store"
)

// ExitHeld is what `log --follow` exits with when the run stopped because
// it waits for approval: neither a success nor a failure yet.
const ExitHeld = 3

var logCommand = command{
	name:    "log",
	example: `ssh -p 2222 HOST log 4 --follow`,
	usage:   "log RUN [--follow] [--json]",
	summary: "a run's masked log (--follow: until it stops or is held)",
	help: `The run's log as stored, secrets masked and control characters escaped.
--follow keeps streaming until the run ends or is held for approval, then
prints the run's status line ("run 4 failed: …") and exits 0 if the run
succeeded, 3 if it waits for approval, 1 otherwise (failed, cancelled,
rejected, refused, stale, interrupted).

--json prints JSON lines: {"offset": N, "text": "…"} for each line of
the log (offset is the line's byte offset in the log; text has no
newline), and with --follow a last line {"run", "status", "message"}.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		follow := fs.Bool("follow", false, "keep streaming until the run stops or is held")
		return func(c *call) int { return c.log(*follow) }
	},
}

// log prints a run's masked log, or follows it and ends with its status.
func (c *call) log(follow bool) int {
	rid := c.arg(0)
	if _, err := c.s.Run(rid); err != nil {
		return c.refuse(err)
	}
	var sink logOutput = &textLog{w: c.out}
	if c.json {
		sink = &jsonLog{w: rawWriter(c.out)}
	}
	if follow {
		if err := c.s.FollowLog(c.ctx, rid, 0, sink.chunk); err != nil {
			return c.refuse(err)
		}
		sink.flush()
		return c.endOfFollow(rid, sink)
	}
	chunks, err := c.s.ReadLog(rid, 0)
	if err != nil {
		return c.refuse(err)
	}
	for _, ch := range chunks {
		if sink.chunk(ch) != nil {
			break
		}
	}
	sink.flush()
	return exitOK
}

// endOfFollow prints the followed run's status line and returns the exit
// status it stands for: exitOK for succeeded, ExitHeld for held, exitRefused
// for any other end.
func (c *call) endOfFollow(rid string, sink logOutput) int {
	run, err := c.s.Run(rid)
	if err != nil {
		return c.refuse(err)
	}
	sink.status(run)
	return followExit(store.Status(run.Status))
}

// followExit is the exit status of `log --follow` (and the waits that
// follow a run) for a run that stopped with st.
func followExit(st store.Status) int {
	switch st {
	case store.StatusSucceeded:
		return exitOK
	case store.StatusAwaitingApproval:
		return ExitHeld
	}
	return exitRefused
}

// logOutput is where `log` writes: text as stored, or JSON lines.
type logOutput interface {
	chunk(store.Chunk) error
	flush()
	status(store.Run)
}

// textLog writes the log as it is stored (the call's writer escapes it).
type textLog struct {
	w       io.Writer
	midLine bool // the last byte written was not a newline
}

func (t *textLog) chunk(ch store.Chunk) error {
	if len(ch.Data) > 0 {
		t.midLine = ch.Data[len(ch.Data)-1] != '\n'
	}
	_, err := t.w.Write(ch.Data)
	return err
}

func (t *textLog) flush() {}

// status writes the run's final status line, on a line of its own.
func (t *textLog) status(r store.Run) {
	if t.midLine {
		fmt.Fprintln(t.w)
	}
	fmt.Fprintf(t.w, "run %s %s: %s\n", r.ID, r.Status, screentext.Sentence(r.Message))
}

// jsonLog writes the log as JSON lines, one per line of the log, holding a
// line back until its newline arrives (so a character split across chunks
// stays whole).
type jsonLog struct {
	w       io.Writer
	pending []byte
	offset  int64 // the byte offset of pending's first byte
}

// logLine is one line of `log --json`.
type logLine struct {
	Offset int64  `json:"offset"`
	Text   string `json:"text"`
}

// logEnd is the last line of `log --follow --json`.
type logEnd struct {
	Run     string `json:"run"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (j *jsonLog) chunk(ch store.Chunk) error {
	if len(j.pending) == 0 {
		j.offset = ch.Offset
	}
	j.pending = append(j.pending, ch.Data...)
	for {
		i := bytes.IndexByte(j.pending, '\n')
		if i < 0 {
			return nil
		}
		if err := j.line(j.pending[:i]); err != nil {
			return err
		}
		j.pending, j.offset = j.pending[i+1:], j.offset+int64(i+1)
	}
}

// flush writes a last line that has no newline.
func (j *jsonLog) flush() {
	if len(j.pending) > 0 {
		j.line(j.pending)
		j.offset += int64(len(j.pending))
		j.pending = nil
	}
}

func (j *jsonLog) line(b []byte) error { return j.write(logLine{Offset: j.offset, Text: string(b)}) }

func (j *jsonLog) status(r store.Run) {
	j.write(logEnd{Run: r.ID, Status: string(r.Status), Message: r.Message})
}

func (j *jsonLog) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(jsonSafe(b), '\n'))
	return err
}

// rawWriter returns the writer under the call's escaping writer (JSON is
// escaped by jsonSafe instead), flushing what was escaped so far.
func rawWriter(w io.Writer) io.Writer {
	if sw, ok := w.(*safeWriter); ok {
		sw.Flush()
		return sw.w
	}
	return w
}
