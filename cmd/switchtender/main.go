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
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `switchtender runs OpenTofu and Terraform for a team.

Usage:
  switchtender serve --config FILE [--strict] [--log-format text|json] [--log-level LEVEL]
                                        run the control node
  switchtender demo [--data DIR] [--listen ADDR]
                                        run the control node on an embedded example
  switchtender keygen seal --out FILE   make a server sealing key (mode 0600)
  switchtender keygen pool              print a pool delivery key pair (age)
  switchtender check --config FILE [--json]
                                        report what serve would refuse or warn about (exit 1 if anything)
  switchtender reload --config FILE     check the configuration, then send SIGHUP to the serve using its data directory
  switchtender audit verify --config FILE
                                        check the audit trail's hash chain (server stopped)
  switchtender audit export --config FILE
                                        write the audit trail as JSON lines
  switchtender tofu                     build or find the pinned OpenTofu; print its path
  switchtender version                  print the module version and VCS commit of this build
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var u usageError
		fmt.Fprintf(os.Stderr, "switchtender: %v\n", err)
		if errors.As(err, &u) {
			fmt.Fprint(os.Stderr, "\n"+usage)
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
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "worker":
		return errors.New("relay workers are not available in this version; runs execute on the control node")
	}
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}
