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
// on each SIGHUP: a configuration that loads and that the judgement does
// not refuse replaces it (Server.Reload); one that does not load, or has
// an error, is refused, the reasons go to the log and the old one stays.
// Each outcome is also written to dataDir's reload outcome file, where
// `switchtender reload` reads it.
func reloadOn(ctx context.Context, srv *server.Server, path, dataDir string, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if path == "" {
			logger.Warn("reload: SIGHUP ignored: this server was not started from a configuration file")
			continue
		}
		out := reloadOnce(srv, path, logger)
		out.PID, out.Seq = os.Getpid(), seq
		if err := writeReloadOutcome(dataDir, out); err != nil {
			logger.Warn("reload: the outcome file was not written; `switchtender reload` cannot tell whether this reload took", "err", err)
		}
	}
}

// reloadOnce loads the file at path and hands it to srv.Reload, and
// returns the outcome.
func reloadOnce(srv *server.Server, path string, logger *slog.Logger) reloadOutcome {
	digest := fileDigest(path)
	cfg, err := config.Load(path)
	if err != nil {
		logger.Error("reload refused: the configuration does not load; the old one stays", "config", path,
			"errors", strings.Split(err.Error(), "\n"))
		return reloadOutcome{Digest: digest, Message: fmt.Sprintf("the configuration does not load, so the old one stays:\n%v", err)}
	}
	if err := srv.Reload(cfg); err != nil {
		return reloadOutcome{Digest: digest, Message: err.Error()}
	}
	return reloadOutcome{Digest: digest, OK: true, Message: "the configuration was replaced"}
}

// reloadFlags declares reload's flags; it returns them and where --config
// lands.
func reloadFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("reload", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "switchtender.hcl", "the configuration `FILE` (HCL) serve was started with")
}

// cmdReload judges the configuration at --config as `check` does and, if
// it loads and has no error, sends SIGHUP to the serve process whose ID is
// in its data directory's pid file, then waits for that server's own
// outcome (reloadOutcomeWait at most) and prints it. It returns an error,
// so exits 1, when the file does not load or has an error (nothing is
// sent), when the server refused the reload (its reasons are printed), and
// when no outcome came. For systemd, `ExecReload=/bin/kill -HUP $MAINPID`
// sends the signal without the check or the wait.
func cmdReload(args []string, stdout io.Writer) error {
	fs, cfgPath := reloadFlags()
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{"reload takes --config FILE and nothing else"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return fmt.Errorf("%w\nnothing was reloaded: fix the configuration first", err)
	}
	if errs := server.Errors(server.Check(cfg, os.Environ())); len(errs) > 0 {
		return fmt.Errorf("%s\nnothing was reloaded: the configuration has errors the server refuses (`switchtender check` reports them too); fix them first", problemLines(errs))
	}
	pid, err := servingPID(cfg.Server.DataDir)
	if err != nil {
		return err
	}
	before, _ := readReloadOutcome(cfg.Server.DataDir)
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("sending SIGHUP to switchtender (pid %d): %w", pid, err)
	}
	out, err := awaitReloadOutcome(cfg.Server.DataDir, pid, before, fileDigest(*cfgPath))
	if err != nil {
		return fmt.Errorf("sent SIGHUP to switchtender (pid %d), but %w", pid, err)
	}
	if !out.OK {
		return fmt.Errorf("switchtender (pid %d) refused the reload and keeps the configuration in force:\n%s", pid, out.Message)
	}
	fmt.Fprintf(stdout, "switchtender (pid %d) reloaded %s: %s\n", pid, *cfgPath, out.Message)
	return nil
}

// problemLines is one problem per line.
func problemLines(ps []server.Problem) string {
	lines := make([]string, 0, len(ps))
	for _, p := range ps {
		lines = append(lines, p.What)
	}
	return strings.Join(lines, "\n")
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
