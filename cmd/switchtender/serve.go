package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "switchtender.hcl", "the configuration file (HCL)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil // the flag package printed the usage
	} else if err != nil {
		return usageError{err.Error()}
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
