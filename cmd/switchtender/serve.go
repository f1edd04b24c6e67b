package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// serveArgs are where serve's flags land.
type serveArgs struct {
	cfgPath, format, level *string
	strict                 *bool
}

// serveFlags declares serve's flags; it returns them and where they land.
func serveFlags() (*flag.FlagSet, serveArgs) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, serveArgs{
		cfgPath: fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL); SIGHUP reloads it"),
		format:  fs.String("log-format", "text", "the operator log's `FORMAT` on stderr: text or json"),
		level:   fs.String("log-level", "info", "the operator log's least `LEVEL`: debug, info, warn or error"),
		strict:  fs.Bool("strict", false, "refuse to start (exit 1) on any problem check would report"),
	}
}

// cmdServe loads the configuration --config names and serves until ctx
// ends, reloading it on SIGHUP.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, a := serveFlags()
	if err := fs.Parse(args); err != nil {
		return usageError{"serve: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve takes only flags, not %q; see `switchtender serve --help`", fs.Arg(0))}
	}
	cfgPath, format, level, strict := a.cfgPath, a.format, a.level, a.strict
	logger, err := newLogger(stderr, *format, *level)
	if err != nil {
		return usageError{err.Error()}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	return serveLogged(ctx, cfg, os.Environ(), logger, serveChoices{strict: *strict, cfgPath: *cfgPath}, func(addr string) {
		fmt.Fprintf(stdout, "switchtender: serving SSH on %s (data in %s)\n", addr, cfg.Server.DataDir)
	})
}

// logProblems logs each problem, an error at level ERROR.
func logProblems(logger *slog.Logger, ps []server.Problem) {
	for _, p := range ps {
		level := slog.LevelWarn
		if p.Severity == server.SeverityError {
			level = slog.LevelError
		}
		logger.Log(context.Background(), level, "configuration problem", "where", p.Where, "problem", p.What, "severity", p.Severity)
	}
}

// refuseToServe logs each of errs and returns serve's refusal naming them.
func refuseToServe(logger *slog.Logger, errs []server.Problem) error {
	logProblems(logger, errs)
	lines := make([]string, 0, len(errs))
	for _, p := range errs {
		lines = append(lines, p.What)
	}
	return fmt.Errorf("serve refuses this configuration (`switchtender check` reports the same); nothing was started:\n%s", strings.Join(lines, "\n"))
}

// newLogger builds the operator log writing to out: format "text" (slog's
// key=value lines) or "json" (one JSON object per line), at level "debug",
// "info", "warn" or "error" and above. Anything else is an error naming
// the choices.
func newLogger(out io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: give debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(out, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: give text or json", format)
}

// serve runs a control node until ctx ends, with a text operator log on
// logOut; SIGHUP (`switchtender reload`) reloads cfg from cfgPath, the
// file it was loaded from.
func serve(ctx context.Context, cfg *config.Config, cfgPath string, environ []string, logOut io.Writer, ready func(addr string)) error {
	logger, _ := newLogger(logOut, "text", "info")
	return serveLogged(ctx, cfg, environ, logger, serveChoices{cfgPath: cfgPath}, ready)
}

// serveChoices are serve's choices beyond the configuration.
type serveChoices struct {
	strict  bool   // refuse to start on any problem check reports
	cfgPath string // the file SIGHUP reloads; "" turns reload off
}

// serveLogged runs a control node until ctx ends, logging to logger; ready
// gets the SSH address once it listens. The configuration is judged as
// `check` judges it (server.Check) before anything opens, and again with
// the rules the server compiled: an error refuses to start, and with
// strict any problem does; every problem is logged before it listens.
// SIGHUP reloads the configuration from flags.cfgPath (see reloadOn); the
// process ID is in DATA/switchtender.pid while it serves.
func serveLogged(ctx context.Context, cfg *config.Config, environ []string, logger *slog.Logger, flags serveChoices, ready func(addr string)) error {
	pre := server.Check(cfg, environ)
	if errs := server.Errors(pre); len(errs) > 0 {
		return refuseToServe(logger, errs)
	} else if flags.strict && len(pre) > 0 {
		logProblems(logger, pre)
		return fmt.Errorf("--strict: %d problems (logged above); nothing was started", len(pre))
	}
	srv, err := server.New(cfg, server.Options{Environ: environ, Logger: logger})
	if err != nil {
		return err
	}
	problems := srv.ProblemList()
	logProblems(logger, problems)
	if errs := server.Errors(problems); len(errs) > 0 || (flags.strict && len(problems) > 0) {
		srv.Close()
		if len(errs) > 0 {
			return fmt.Errorf("serve refuses this configuration: %d errors (logged above); nothing was started", len(errs))
		}
		return fmt.Errorf("--strict: %d problems (logged above); nothing was started", len(problems))
	}
	n := &controlNode{srv: srv}
	if err := n.Start(ctx); err != nil {
		n.Close()
		return err
	}
	removePID, err := writePIDFile(cfg.Server.DataDir)
	if err != nil {
		logger.Warn("the pid file was not written; `switchtender reload` cannot find this server (send SIGHUP yourself)", "err", err)
	}
	defer removePID()
	logger.Info("serving", "ssh", srv.SSHAddr(), "metrics", srv.MetricsAddr(), "data_dir", cfg.Server.DataDir)
	ready(srv.SSHAddr())
	reloadOn(ctx, srv, flags.cfgPath, cfg.Server.DataDir, logger)
	logger.Info("stopping; a run executing now is interrupted (its tool gets an interrupt so it can release its state lock) and is not re-run; queued and held runs wait for the next start")
	return n.Close()
}
