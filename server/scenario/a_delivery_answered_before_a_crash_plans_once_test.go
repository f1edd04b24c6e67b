package scenario

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	osexec "os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// forgeNodeEnv names, for TestForgeNodeProcess, the configuration the
// child control node serves.
const forgeNodeEnv = "SWITCHTENDER_TEST_FORGE_NODE_CONFIG"

// TestForgeNodeProcess is the child of
// TestADeliveryAnsweredBeforeACrashPlansOnceAfterTheRestart: a control
// node serving webhooks on its configuration until it is killed. Run on
// its own, it skips.
func TestForgeNodeProcess(t *testing.T) {
	path := os.Getenv(forgeNodeEnv)
	if path == "" {
		t.Skip("the child process of TestADeliveryAnsweredBeforeACrashPlansOnceAfterTheRestart")
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, server.Options{Environ: testkit.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("webhooks on %s\n", srv.WebhookAddr())
	select {}
}

// TestADeliveryAnsweredBeforeACrashPlansOnceAfterTheRestart guards "loses
// nothing": the node is SIGKILLed right after it answered 200 to the
// opened delivery (the kill hook, before the processor can act), and
// after a restart on the same data directory that pull request's head is
// planned exactly once.
func TestADeliveryAnsweredBeforeACrashPlansOnceAfterTheRestart(t *testing.T) {
	t.Parallel()
	f := writeForgeHarness(t)
	child := osexec.Command(os.Args[0], "-test.run=^TestForgeNodeProcess$", "-test.count=1")
	child.Env = append(os.Environ(), forgeNodeEnv+"="+f.cfgPath, "SWITCHTENDER_KILL_AFTER_WEBHOOK=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill() })
	addr := readWebhookAddr(t, bufio.NewScanner(out))
	f.relay.sendTo("http://" + addr + "/webhooks/corp")
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	f.relay.waitKept(t, "the opened delivery answered 200", func(k keptDelivery) bool {
		return k.Header.Get("X-Gitea-Event-Type") == "pull_request" && k.Code == http.StatusOK
	})
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case err := <-exited:
		var ee *osexec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the node ended with %v, not SIGKILL", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the node was not killed after answering the delivery")
	}
	f.startNode()
	f.waitStatus(head, "switchtender/plan/network", "success")
	if runs := f.prRuns(n); len(runs) != 1 {
		t.Fatalf("%d runs of the head after the crash and restart, want one:%s", len(runs), f.runsSummary())
	}
	f.restart()
	f.relay.sendTo("http://" + f.srv.WebhookAddr() + "/webhooks/corp")
	f.waitComment(n, "planned")
	if runs := f.prRuns(n); len(runs) != 1 {
		t.Fatalf("%d runs after a second restart, want one:%s", len(runs), f.runsSummary())
	}
}

// readWebhookAddr reads the child's "webhooks on ADDR" line.
func readWebhookAddr(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "webhooks on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return addr
		}
	}
	t.Fatalf("the child node printed no webhook address: %v", sc.Err())
	return ""
}
