package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// errRefused and errWarned make `check` exit 1 after printing what it
// found: errors serve and reload refuse, or only warnings they log.
var (
	errRefused = errors.New("the configuration has errors (above): serve refuses to start with it and a reload refuses it")
	errWarned  = errors.New("the configuration has warnings (above): serve starts with it and logs them, and serve --strict refuses it")
)

// checkReport is `check --json`'s output: ok is true when problems is
// empty; each problem's severity is "error" (serve and reload refuse) or
// "warning" (they log it).
type checkReport struct {
	Config   string           `json:"config"`
	OK       bool             `json:"ok"`
	Problems []server.Problem `json:"problems"`
	Notes    []string         `json:"notes,omitempty"` // what was not checked, and why
}

// checkArgs are where check's flags land.
type checkArgs struct {
	cfgPath *string
	json    *bool
}

// checkFlags declares check's flags; it returns them and where they land.
func checkFlags() (*flag.FlagSet, checkArgs) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, checkArgs{
		cfgPath: fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL)"),
		json:    fs.Bool("json", false, "print a JSON report: {config, ok, problems: [{where, problem, severity}], notes}"),
	}
}

// cmdCheck reports everything `serve` would refuse or warn about in a
// configuration, for CI, without running anything: a configuration that
// does not load (every error with file:line), the judgement serve and
// reload act on (server.Check: a plan_gate that does not compile, a
// template whose working directory or tool binary cannot be found, a
// metrics_listen off loopback, ...), and, when the data directory holds a
// store, a held or kept sealed value the sealing key cannot open. Exit 0
// and one line when there is nothing, exit 1 with one line per problem,
// "error: " or "warning: " first, otherwise; --json prints a checkReport.
func cmdCheck(args []string, stdout io.Writer) error {
	fs, a := checkFlags()
	cfgPath, asJSON := a.cfgPath, a.json
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{"check takes --config FILE [--json] and nothing else"}
	}
	found, notes := checkProblems(*cfgPath)
	if found == nil {
		found = []server.Problem{} // a clean report prints "problems": [], never null
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checkReport{Config: *cfgPath, OK: len(found) == 0, Problems: found, Notes: notes}); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	} else {
		for _, p := range found {
			fmt.Fprintf(stdout, "%s: %s\n", p.Severity, p)
		}
		for _, n := range notes {
			fmt.Fprintf(stdout, "note: %s\n", n)
		}
	}
	if len(server.Errors(found)) > 0 {
		return errRefused
	} else if len(found) > 0 {
		return errWarned
	}
	if !*asJSON {
		sealed := " and the sealing key opens every sealed value runs still need"
		if len(notes) > 0 {
			sealed = " (sealed values: see the note above)"
		}
		fmt.Fprintf(stdout, "%s: the configuration loads, every working directory resolves inside its checkout, every tool is on the PATH, every plan_gate compiles%s\n", *cfgPath, sealed)
	}
	return nil
}

// checkProblems loads the configuration at path and lists its problems and
// its data directory's; a configuration that does not load is one problem
// per error (each with its file:line), in line order. notes say what was
// not checked and why.
func checkProblems(path string) (found []server.Problem, notes []string) {
	cfg, err := config.Load(path)
	if err != nil {
		return loadProblems(path, err), []string{"the configuration does not load, so its plan_gate policies, working directories, tool binaries and sealed values were not checked yet: fix the errors above and run check again"}
	}
	found = server.Check(cfg, os.Environ())
	data, note := server.CheckData(cfg.Server.DataDir, cfg.Server.SealKey, cfg.Server.HostKey)
	if note != "" {
		notes = append(notes, note)
	}
	return append(found, data...), notes
}

// loadProblems turns a load error into problems: one per diagnostic of a
// *config.Error, or one for anything else.
func loadProblems(path string, err error) []server.Problem {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return []server.Problem{{Where: path, What: err.Error(), Severity: server.SeverityError}}
	}
	var out []server.Problem
	diags := slices.Clone(ce.Diagnostics)
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int { return lineOf(a) - lineOf(b) })
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := path
		if d.Subject != nil {
			where = fmt.Sprintf("%s:%d", d.Subject.Filename, d.Subject.Start.Line)
		}
		out = append(out, server.Problem{Where: where, What: config.FormatDiagnostic(d), Severity: server.SeverityError})
	}
	return out
}

// lineOf is the line a diagnostic is about, 0 when it has no place.
func lineOf(d *hcl.Diagnostic) int {
	if d.Subject == nil {
		return 0
	}
	return d.Subject.Start.Line
}
