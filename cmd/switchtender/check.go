package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// errProblems makes `check` exit 1 after printing what it found.
var errProblems = errors.New("the configuration has problems (above); serve would refuse it or warn")

// checkFlags declares check's flags; it returns them and where --config lands.
func checkFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL)")
}

// cmdCheck reports everything `serve` would refuse or warn about in a
// configuration, for CI, without opening its data directory or running
// anything: exit 0 and one line when there is nothing, exit 1 with one line
// per problem otherwise.
func cmdCheck(args []string, stdout io.Writer) error {
	fs, cfgPath := checkFlags()
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{"check takes --config FILE and nothing else"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	found := server.Check(cfg, os.Environ())
	for _, p := range found {
		fmt.Fprintf(stdout, "%s\n", p)
	}
	if len(found) > 0 {
		return errProblems
	}
	fmt.Fprintf(stdout, "%s: the configuration loads, every working directory resolves inside its checkout, every tool is on the PATH and every plan_gate compiles\n", *cfgPath)
	return nil
}
