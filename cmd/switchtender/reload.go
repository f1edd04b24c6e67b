package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// pidFileName is the file in the data directory that holds serve's process
// ID while it serves, for `switchtender reload`.
const pidFileName = "switchtender.pid"

// writePIDFile writes this process's ID into dataDir (mode 0600) and
// returns a function that removes it again.
func writePIDFile(dataDir string) (func(), error) {
	path := filepath.Join(dataDir, pidFileName)
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return func() {}, fmt.Errorf("writing %s: %w", path, err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// reloadOn waits for ctx to end, reloading srv's configuration from path
// on each SIGHUP: a configuration that loads replaces it (Server.Reload);
// one that does not is refused, every error goes to the log and the old
// one stays.
func reloadOn(ctx context.Context, srv *server.Server, path string, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if path == "" {
			logger.Warn("reload: SIGHUP ignored: this server was not started from a configuration file")
			continue
		}
		cfg, err := config.Load(path)
		if err != nil {
			logger.Error("reload refused: the configuration does not load; the old one stays", "config", path,
				"errors", strings.Split(err.Error(), "\n"))
			continue
		}
		srv.Reload(cfg)
	}
}

// reloadFlags declares reload's flags; it returns them and where --config
// lands.
func reloadFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("reload", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL) serve was started with")
}

// cmdReload checks the configuration at --config and, if it loads, sends
// SIGHUP to the serve process whose ID is in its data directory's pid
// file. A configuration that does not load is printed and nothing is sent
// (exit 1). For systemd, `ExecReload=/bin/kill -HUP $MAINPID` does the same
// without the check.
func cmdReload(args []string, stdout io.Writer) error {
	fs, cfgPath := reloadFlags()
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{"reload takes --config FILE and nothing else"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return fmt.Errorf("%w\nnothing was reloaded: fix the configuration first", err)
	}
	pid, err := servingPID(cfg.Server.DataDir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("sending SIGHUP to switchtender (pid %d): %w", pid, err)
	}
	fmt.Fprintf(stdout, "sent SIGHUP to switchtender (pid %d); its operator log says whether the reload took\n", pid)
	return nil
}

// servingPID reads the pid file in dataDir and checks, where /proc tells,
// that the process is a switchtender (a stale file after a crash may name
// a process ID another program has since).
func servingPID(dataDir string) (int, error) {
	path := filepath.Join(dataDir, pidFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("%s does not exist: is `switchtender serve` running with this data directory?", path)
	} else if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s does not hold a process ID", path)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && !strings.Contains(filepath.Base(exe), "switchtender") {
		return 0, fmt.Errorf("%s names process %d, which is %s, not switchtender; the file is stale (the server stopped without removing it)", path, pid, exe)
	} else if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("%s names process %d, which is not running; the file is stale", path, pid)
	}
	return pid, nil
}
