package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/worker"
)

// workerFlags declares worker's flags; it returns them and where --config
// lands.
func workerFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "worker.hcl", "the worker's configuration `FILE` (HCL)")
}

// cmdWorker runs a relay worker. The end of ctx (SIGTERM or an interrupt)
// drains it: it takes no new run and finishes the one it has; a second
// signal interrupts that run's tool too.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := workerFlags()
	if err := fs.Parse(args); err != nil {
		return usageError{"worker: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("worker takes only flags, not %q; see `switchtender worker --help`", fs.Arg(0))}
	}
	cfg, err := config.LoadWorker(*cfgPath)
	if err != nil {
		return err
	}
	drain := make(chan struct{})
	hard, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ctx.Done()
		fmt.Fprintln(stderr, "switchtender: draining: no new run is taken; the current one finishes (signal again to interrupt it)")
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		close(drain)
		select {
		case <-sigs:
			cancel()
		case <-hard.Done():
		}
	}()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return worker.RunWorker(hard, cfg, worker.WorkerOptions{Environ: os.Environ(), Logger: logger, Version: version, Drain: drain})
}
