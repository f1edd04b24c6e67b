package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// A subscriber that never reads is dropped (its channel closed) once its
// buffer is full, publishing never blocks, and a subscriber that keeps up
// receives every event in order. Subscribers of other runs see nothing.
func TestBrokerDropsSlowSubscriber(t *testing.T) {
	b := newBroker()
	slow, cancelSlow := b.subscribeLog("1")
	fast, cancelFast := b.subscribeLog("1")
	other, cancelOther := b.subscribeLog("2")
	// No deferred unsubscribe: after a publish that blocked while holding the
	// broker's lock, it would hang the test instead of letting it fail.

	// The fast subscriber acknowledges each event, so it is never more than
	// one behind; the publisher runs in its own goroutine so a publish that
	// blocked would show as a timeout instead of hanging the test.
	const n = subscriberBuffer + 50
	var got []logEvent
	acked := make(chan struct{})
	go func() {
		for ev := range fast {
			got = append(got, ev)
			acked <- struct{}{}
		}
		close(acked)
	}()
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range n {
			b.publishLog("1", logEvent{Offset: int64(i), Data: []byte{byte(i)}})
			<-acked
		}
	}()
	select {
	case <-published:
	case <-time.After(10 * time.Second):
		t.Fatalf("publishing %d events to a subscriber that never reads blocked", n)
	}

	// The slow one holds exactly the first subscriberBuffer events, then
	// its channel is closed.
	count := 0
	for ev := range slow {
		if ev.Offset != int64(count) {
			t.Fatalf("slow subscriber event %d has offset %d", count, ev.Offset)
		}
		count++
	}
	if count != subscriberBuffer {
		t.Fatalf("slow subscriber received %d events before being dropped, want %d", count, subscriberBuffer)
	}
	cancelSlow() // ending a dropped subscription again must not panic

	cancelFast()
	for range acked {
	}
	if len(got) != n {
		t.Fatalf("fast subscriber received %d events, want %d", len(got), n)
	}
	for i, ev := range got {
		if ev.Offset != int64(i) || len(ev.Data) != 1 || ev.Data[0] != byte(i) {
			t.Fatalf("fast subscriber event %d = %+v", i, ev)
		}
	}
	select {
	case ev := <-other:
		t.Fatalf("a subscriber of run 2 received an event of run 1: %+v", ev)
	default:
	}
	cancelOther()
	// Publishing to a run nobody follows is a no-op.
	b.publishLog("3", logEvent{End: true})
}

// Ending a subscription closes its channel and stops delivery; ending it
// twice is harmless; the broker forgets runs with no followers.
func TestBrokerUnsubscribe(t *testing.T) {
	b := newBroker()
	ch, cancel := b.subscribeLog("1")
	b.publishLog("1", logEvent{Offset: 0, Data: []byte("a")})
	cancel()
	cancel()
	ev, ok := <-ch
	if !ok || string(ev.Data) != "a" {
		t.Fatalf("event published before unsubscribing lost: %+v %v", ev, ok)
	}
	if _, ok := <-ch; ok {
		t.Fatalf("channel still open after unsubscribing")
	}
	b.publishLog("1", logEvent{Offset: 1, Data: []byte("b")}) // must not panic on a closed channel
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.logs) != 0 {
		t.Fatalf("broker keeps %d runs with no followers", len(b.logs))
	}
}

// watchRuns coalesces ticks: any number of changes while a watcher is not
// reading leave one tick, never block runChanged, and a later change ticks
// again. Every watcher is ticked; an ended watch is closed and skipped.
func TestBrokerWatchRunsCoalesces(t *testing.T) {
	b := newBroker()
	w1, cancel1 := b.watchRuns()
	w2, cancel2 := b.watchRuns()
	defer cancel2()

	done := make(chan struct{})
	go func() {
		for range 1000 {
			b.runChanged()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("runChanged blocked on watchers that do not read")
	}
	for _, w := range []<-chan struct{}{w1, w2} {
		if _, ok := <-w; !ok {
			t.Fatalf("watch channel closed")
		}
		select {
		case <-w:
			t.Fatalf("1000 changes left more than one tick")
		default:
		}
	}
	b.runChanged()
	select {
	case <-w1:
	default:
		t.Fatalf("a change after the watcher read left no tick")
	}
	cancel1()
	cancel1()
	if _, ok := <-w1; ok {
		t.Fatalf("ended watch still open")
	}
	b.runChanged() // must not send on the closed channel
	<-w2
}

// followTemplate runs a real apply whose provisioner prints a first part,
// waits until the file named by go_file exists, then prints a second part:
// the test decides, with a file rather than a sleep, when the run moves on.
const followTemplate = `
template "follow" {
  project = "infra"
  command = "infra/follow"
  survey "go_file" {
    type = "string"
  }
}
`

const followConfig = `
variable "go_file" { type = string }

resource "terraform_data" "talk" {
  provisioner "local-exec" {
    command = <<-EOT
      i=0; while [ $i -lt 400 ]; do echo "before-$i the first part of the log"; i=$((i+1)); done
      echo first-part-done
      while [ ! -e '${var.go_file}' ]; do sleep 0.02; done
      i=0; while [ $i -lt 4000 ]; do echo "after-$i the second part"; i=$((i+1)); done
    EOT
  }
}
`

// contiguous collects a follower's chunks and checks that each starts where
// the previous ended: a chunk seen twice or a gap fails.
type contiguous struct {
	mu   sync.Mutex
	next int64
	buf  bytes.Buffer
	errs []string
}

func (c *contiguous) add(ch store.Chunk) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.Offset != c.next {
		c.errs = append(c.errs, fmt.Sprintf("chunk at offset %d, want %d", ch.Offset, c.next))
	}
	c.buf.Write(ch.Data)
	c.next = ch.Offset + int64(len(ch.Data))
	return nil
}

// Followers that join a run late see the whole log exactly once: over SSH
// (`log RUN --follow`, joining while the run waits mid-way), in process from
// an offset in the middle, and in process while being dropped by the broker
// for not reading, after which it rejoins from its offset. All equal what
// `log RUN` prints once the run ended.
func TestFollowLogLateJoinersSeeWholeLogOnce(t *testing.T) {
	h := newHarness(t, followTemplate)
	if err := os.MkdirAll(filepath.Join(h.project, "infra/follow"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.project, "infra/follow/main.tf"), []byte(followConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	h.mustSSH("alice", "launch", "follow", "--var", "go_file="+goFile)

	// Wait until the first part is stored; the run is then waiting for goFile.
	deadline := time.Now().Add(3 * time.Minute)
	var mid int64
	for {
		chunks, err := h.srv.db.ReadLog("1", 0)
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, c := range chunks {
			all = append(all, c.Data...)
		}
		if i := bytes.Index(all, []byte("first-part-done")); i >= 0 {
			mid = int64(i)
			break
		}
		if r, _ := h.srv.db.GetRun("1"); !r.Status.Active() || time.Now().After(deadline) {
			t.Fatalf("the first part never arrived; run is %s (%s):\n%s", r.Status, r.Message, all)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// 1. Over SSH: read until the follower has printed the first part.
	client, err := dialAs(h, "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start(shellJoin([]string{"log", "1", "--follow"})); err != nil {
		t.Fatal(err)
	}
	var sshOut bytes.Buffer
	rd := bufio.NewReader(stdout)
	for !strings.Contains(sshOut.String(), "first-part-done\n") {
		line, err := rd.ReadString('\n')
		sshOut.WriteString(line)
		if err != nil {
			t.Fatalf("reading the SSH follower: %v; got:\n%s", err, sshOut.String())
		}
	}
	sshDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(&sshOut, rd)
		if err == nil {
			err = sess.Wait()
		}
		sshDone <- err
	}()

	// 2. In process, from the middle of the stored part.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fromMid := &contiguous{next: mid}
	midDone := make(chan error, 1)
	go func() { midDone <- h.srv.FollowLog(ctx, "1", mid, fromMid.add) }()

	// 3. In process, a follower that stops reading on its first chunk until
	// the broker has dropped it: the test re-publishes an already stored
	// chunk (as a duplicate, which followers must ignore) until its buffer
	// overflows.
	dropped := &contiguous{}
	firstCall := make(chan struct{})
	unblock := make(chan struct{})
	var once sync.Once
	dropDone := make(chan error, 1)
	go func() {
		dropDone <- h.srv.FollowLog(ctx, "1", 0, func(c store.Chunk) error {
			once.Do(func() {
				close(firstCall)
				<-unblock
			})
			return dropped.add(c)
		})
	}()
	<-firstCall
	first, err := h.srv.db.ReadLog("1", 0)
	if err != nil || len(first) == 0 {
		t.Fatalf("reading the stored log: %v", err)
	}
	for range subscriberBuffer + 1 {
		h.srv.broker.publishLog("1", logEvent{Offset: first[0].Offset, Data: first[0].Data})
	}
	close(unblock)

	// Let the run finish.
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan error{"ssh": sshDone, "middle": midDone, "dropped": dropDone} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("%s follower: %v", name, err)
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("%s follower did not return after the run ended", name)
		}
	}
	h.waitStatus("1", StatusSucceeded)

	want := h.mustSSH("bob", "log", "1")
	if !strings.Contains(want, "after-3999 the second part") {
		t.Fatalf("stored log lacks the second part:\n%s", want)
	}
	check := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s follower saw %d bytes, `log 1` prints %d; first difference at byte %d", name, len(got), len(want), firstDiff(got, want))
		}
	}
	got, status, _ := strings.Cut(sshOut.String(), "run 1 succeeded: ")
	if status == "" {
		t.Errorf("the ssh follower's output does not end with the run's status line")
	}
	check("ssh", got, want)
	check("middle", fromMid.buf.String(), want[mid:])
	check("dropped", dropped.buf.String(), want)
	for name, c := range map[string]*contiguous{"middle": fromMid, "dropped": dropped} {
		for _, e := range c.errs {
			t.Errorf("%s follower: %s", name, e)
		}
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
