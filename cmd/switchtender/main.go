// Command switchtender runs OpenTofu and Terraform for a team: `serve` is the
// headless control node, `demo` the same on an embedded example, `keygen`
// makes keys, `tofu` provides the pinned OpenTofu the demo and tests use.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var u usageError
		fmt.Fprintf(os.Stderr, "switchtender: %v\n", err)
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr)
			writeUsage(os.Stderr)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// run dispatches a subcommand; it returns when ctx ends or the command is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"a command is needed"}
	}
	if sc, asked, ok := helpTopic(args); asked {
		return writeHelp(stdout, sc, ok, args)
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr)
	case "keygen":
		return cmdKeygen(args[1:], stdout)
	case "audit":
		return cmdAudit(args[1:], stdout)
	case "check":
		return cmdCheck(args[1:], stdout)
	case "reload":
		return cmdReload(args[1:], stdout)
	case "tofu":
		return cmdTofu(ctx, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "worker":
		return cmdWorker(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// writeHelp answers a command line that asks for help: the subcommand's
// help, the top-level usage when no command is named, or a usage error
// naming the unknown command.
func writeHelp(stdout io.Writer, sc *subcommand, known bool, args []string) error {
	switch {
	case sc != nil:
		writeSubHelp(stdout, sc)
	case known:
		writeUsage(stdout)
	default:
		return usageError{fmt.Sprintf("no help for %q: there is no such command", strings.Join(args, " "))}
	}
	return nil
}
