package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// serveFlags declares serve's flags; it returns them and where --config lands.
func serveFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL)")
}

// cmdServe loads the configuration --config names and serves until ctx ends.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := serveFlags()
	if err := fs.Parse(args); err != nil {
		return usageError{"serve: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve takes only flags, not %q; see `switchtender serve --help`", fs.Arg(0))}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, os.Environ(), stderr, func(addr string) {
		fmt.Fprintf(stdout, "switchtender: serving SSH on %s (data in %s)\n", addr, cfg.Server.DataDir)
	})
}

// serve runs a control node until ctx ends.
func serve(ctx context.Context, cfg *config.Config, environ []string, logOut io.Writer, ready func(addr string)) error {
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := server.New(cfg, server.Options{Environ: environ, Logger: logger})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		srv.Close()
		return err
	}
	for _, p := range srv.Problems() {
		fmt.Fprintf(logOut, "switchtender: warning: %s\n", p)
	}
	ready(srv.SSHAddr())
	<-ctx.Done()
	fmt.Fprintln(logOut, "switchtender: stopping; a run executing now is interrupted (its tool gets an interrupt so it can release its state lock) and is not re-run; queued and held runs wait for the next start")
	return srv.Close()
}
