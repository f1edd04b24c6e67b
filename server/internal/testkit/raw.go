package testkit

import (
	"io"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/server/relay"
)

// RawWorker speaks the relay wire by hand, as a worker that misbehaves
// might: over a real SSH session of the relay command.
type RawWorker struct {
	T      testing.TB
	Client *gossh.Client
	Conn   *relay.Conn
	In     io.Writer // the session's stdin under Conn, for lines that are not messages
}

// DialRaw dials addr as hello.Name with key, starts the relay command,
// sends hello (as a hello; Projects default to the test project "infra")
// and returns the worker with the control node's answer. The connection
// closes when the test ends.
func DialRaw(t testing.TB, addr string, key Key, hello relay.Msg) (*RawWorker, relay.Msg) {
	t.Helper()
	client, err := Dial(addr, hello.Name, key.Signer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Start(relay.Command); err != nil {
		t.Fatal(err)
	}
	w := &RawWorker{T: t, Client: client, Conn: relay.NewConn(out, in), In: in}
	hello.Type = relay.MsgHello
	if hello.Projects == nil {
		hello.Projects = []string{"infra"}
	}
	w.Send(hello)
	return w, w.Recv()
}

// Send sends m, failing the test on an error.
func (w *RawWorker) Send(m relay.Msg) {
	w.T.Helper()
	if err := w.Conn.Send(m); err != nil {
		w.T.Fatal(err)
	}
}

// Recv reads one message, failing the test on an error.
func (w *RawWorker) Recv() relay.Msg {
	w.T.Helper()
	m, err := w.Conn.Recv()
	if err != nil {
		w.T.Fatal(err)
	}
	return m
}

// RecvWithin reads one message, or reports none within d (the reader is
// then left behind: read no more from w).
func RecvWithin(w *RawWorker, d time.Duration) (relay.Msg, bool) {
	ch := make(chan relay.Msg, 1)
	go func() {
		m, err := w.Conn.Recv()
		if err == nil {
			ch <- m
		}
	}()
	select {
	case m := <-ch:
		return m, true
	case <-time.After(d):
		return relay.Msg{}, false
	}
}

// ReadWorker reads every message of w into a channel, closed when the
// connection ends, so a test can wait for one with a timeout.
func ReadWorker(w *RawWorker) chan relay.Msg {
	ch := make(chan relay.Msg, 64)
	go func() {
		defer close(ch)
		for {
			m, err := w.Conn.Recv()
			if err != nil {
				return
			}
			ch <- m
		}
	}()
	return ch
}

// NextMsg waits up to d for a message of type typ (others are skipped),
// or reports none.
func NextMsg(ch chan relay.Msg, typ string, d time.Duration) (relay.Msg, bool) {
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return relay.Msg{}, false
			}
			if m.Type == typ {
				return m, true
			}
		case <-deadline:
			return relay.Msg{}, false
		}
	}
}

// HandOverPlan hands plan over for run under token, with js as its
// `show -json`.
func HandOverPlan(raw *RawWorker, run string, token uint64, plan, js []byte) {
	raw.Send(relay.Msg{Type: relay.MsgPlanning, Run: run, Token: token})
	raw.Send(relay.Msg{Type: relay.MsgPlanStart, Run: run, Token: token, Size: int64(len(plan)), JSONSize: int64(len(js))})
	raw.Send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "plan", Blob: plan})
	raw.Send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "json", Blob: js})
	raw.Send(relay.Msg{Type: relay.MsgPlanEnd, Run: run, Token: token})
}
