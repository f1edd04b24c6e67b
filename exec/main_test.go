package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// helperEnv selects a fake-tofu behaviour when the test binary is re-run as
// a helper process (the way OTF fakes its binaries).
const helperEnv = "EXEC_TEST_HELPER"

// tofuBin is the real, pinned OpenTofu the tests run.
var tofuBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	bin, err := tofubin.Ensure(ctx, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec tests need OpenTofu: %v\n", err)
		os.Exit(1)
	}
	tofuBin = bin
	os.Exit(m.Run())
}

// helper is the fake binary. It reports what it receives on stdout.
func helper(mode string) int {
	switch mode {
	case "sigint-exit": // waits for SIGINT, then exits 3, like tofu releasing its lock
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		s := <-ch
		fmt.Printf("got %v\n", s)
		if f := os.Getenv("HELPER_MARK"); f != "" {
			os.WriteFile(f, []byte(s.String()), 0o644)
		}
		return 3
	case "ignore-sigint": // ignores SIGINT; only SIGKILL ends it
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, syscall.SIGINT)
		fmt.Println("ready")
		for s := range ch {
			fmt.Printf("ignoring %v\n", s)
		}
		return 0
	case "group": // a child in the same process group must get SIGINT too
		child := osexec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=sigint-exit")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		signal.Ignore(syscall.SIGINT) // the parent outlives the signal; the child must get it from the group
		child.Wait()
		return 4
	case "stream": // prints a line, then waits for the test to answer it
		fmt.Println("first line")
		for range 200 {
			if _, err := os.Stat(os.Getenv("HELPER_MARK")); err == nil {
				fmt.Println("second line")
				return 0
			}
			time.Sleep(50 * time.Millisecond)
		}
		return 9
	case "stale": // the stale-plan error, split across writes
		fmt.Fprint(os.Stderr, "\nError: Saved plan is")
		time.Sleep(50 * time.Millisecond)
		fmt.Fprint(os.Stderr, " stale\n\nThe given plan file can no longer be applied.\n")
		return 1
	case "exit7":
		fmt.Println("out line")
		fmt.Fprintln(os.Stderr, "err line")
		return 7
	case "capture": // stdout is private, stderr is logged
		fmt.Println(`{"sensitive":"hunter2-secret"}`)
		fmt.Fprintln(os.Stderr, "a warning")
		return 0
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
		wd, _ := os.Getwd()
		fmt.Println("PWD=" + wd)
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 2
}
