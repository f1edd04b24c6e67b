package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	osexec "os/exec"
	"regexp"
	"strings"
	"testing"
)

// Every local subcommand answers --help, -h and `help NAME` with its usage,
// its flags and an example on stdout, and the real binary exits 0.
func TestHelpForEveryLocalSubcommand(t *testing.T) {
	for _, sc := range subcommands {
		words := strings.Fields(sc.name)
		variants := [][]string{
			append(append([]string{}, words...), "--help"),
			append(append([]string{}, words...), "-h"),
			append([]string{"help"}, words...),
		}
		if sc.flags != nil {
			variants = append(variants, append(append([]string{}, words...), "--config", "x.hcl", "--help"))
		}
		for _, args := range variants {
			cmd := osexec.Command(binary, args...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil || errOut.Len() > 0 {
				t.Errorf("%v: %v, stderr %q", args, err, errOut.String())
				continue
			}
			want := []string{"usage: " + sc.usage, sc.summary, "flags:", "--help, -h", "example:\n  " + sc.example}
			if sc.flags != nil {
				sc.flags().VisitAll(func(f *flag.Flag) { want = append(want, "--"+f.Name) })
			}
			for _, w := range want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("%v lacks %q:\n%s", args, w, out.String())
				}
			}
		}
	}
}

// The top-level usage lists every subcommand, and every word main
// dispatches has an entry in the help table (a new subcommand without
// help fails here).
func TestTopLevelUsageListsEverything(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, sc := range subcommands {
			if !strings.Contains(out.String(), sc.usage) {
				t.Errorf("%v lacks %q", args, sc.usage)
			}
		}
		if !strings.Contains(out.String(), "help") || !strings.Contains(out.String(), "ssh -p PORT HOST help") {
			t.Errorf("%v does not say where the SSH commands are listed:\n%s", args, out.String())
		}
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`case "([a-z]+)"`).FindAllStringSubmatch(string(src), -1) {
		if m[1] != "worker" && findSubcommand(m[1]) == nil {
			t.Errorf("main dispatches %q but the help table has no entry for it", m[1])
		}
	}
}

// Help about something that is not a command, and a flag a command does
// not have, are usage errors (exit 2), never a silent success.
func TestHelpHostile(t *testing.T) {
	for _, args := range [][]string{{"bogus", "--help"}, {"help", "bogus"}, {"serve", "--bogus"}, {"serve", "extra"}, {"demo", "--listen"}} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
		if out.Len() > 0 {
			t.Errorf("%v printed on stdout: %q", args, out.String())
		}
	}
	cmd := osexec.Command(binary, "bogus", "--help")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("bogus --help: %v, want exit 2", err)
	}
}
