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

	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/store"
)

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
	for range logs.SubscriberBuffer + 1 {
		h.srv.broker.PublishLog("1", logs.Event{Offset: first[0].Offset, Data: first[0].Data})
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
