// Package tofubin provides the pinned OpenTofu binary that the demo and the
// tests run: one given by $SWITCHTENDER_TOFU, one on the PATH, or one built
// once from OpenTofu's Go module into a cache directory.
package tofubin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Version is the pinned OpenTofu release, a tag of github.com/opentofu/opentofu.
const Version = "v1.12.6"

// Module is the Go module the binary is built from.
const Module = "github.com/opentofu/opentofu"

// CacheDir returns the directory the built binary is cached under:
// $SWITCHTENDER_CACHE when set, else os.UserCacheDir()/switchtender
// (~/.cache/switchtender on Linux), else the temporary directory's
// switchtender-cache. The binary lives at CacheDir()/tofu/<Version>/tofu.
func CacheDir() string {
	if d := os.Getenv("SWITCHTENDER_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "switchtender")
	}
	return filepath.Join(os.TempDir(), "switchtender-cache")
}

// CachedPath returns where the built binary of Version is cached.
func CachedPath() string {
	return filepath.Join(CacheDir(), "tofu", Version, "tofu")
}

// Ensure returns the absolute path of a tofu binary, in this order:
// $SWITCHTENDER_TOFU when set (an error if it is not an executable file);
// else tofu on the PATH; else the cached build at CachedPath; else it builds
// Version from its Go module (go mod download -json, then go build ./cmd/tofu
// in the module's directory, then a rename into place), printing a line to
// progress before and after (nil: no progress). Building takes several
// minutes on two cores and needs the go command and the Go module proxy.
// The check and the build hold an exclusive lock on CacheDir()/tofu/.lock,
// so parallel processes (test binaries of several packages) build once.
// A cancelled ctx stops the build with an error wrapping ctx.Err().
func Ensure(ctx context.Context, progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	if p := os.Getenv("SWITCHTENDER_TOFU"); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("SWITCHTENDER_TOFU=%s: %w; point it at a tofu binary or unset it", p, err)
		}
		return filepath.Abs(p)
	}
	if p, err := osexec.LookPath("tofu"); err == nil {
		return filepath.Abs(p)
	}
	cached := CachedPath()
	if executable(cached) == nil {
		return cached, nil
	}
	dir := filepath.Dir(cached)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the tofu cache directory: %w", err)
	}
	unlock, err := lock(ctx, filepath.Join(CacheDir(), "tofu", ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if executable(cached) == nil { // another process built it while we waited
		return cached, nil
	}
	if err := build(ctx, cached, progress); err != nil {
		return "", fmt.Errorf("building OpenTofu %s from its Go module: %w", Version, err)
	}
	return cached, nil
}

// PathWith returns a PATH value with bin's directory first, followed by the
// entries of pathEnv (without a repeat of bin's directory), so a run finds
// tofu by name.
func PathWith(bin string, pathEnv string) string {
	dir := filepath.Dir(bin)
	parts := []string{dir}
	for _, p := range filepath.SplitList(pathEnv) {
		if p != dir {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// lock takes an exclusive flock on path, waiting until ctx is done.
func lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the tofu cache lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another process building tofu (lock %s): %w", path, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func build(ctx context.Context, dst string, progress io.Writer) error {
	goBin, err := osexec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed to build tofu: %w; install Go or put tofu on the PATH", err)
	}
	fmt.Fprintf(progress, "building OpenTofu %s from its Go module once; this takes several minutes on 2 cores…\n", Version)
	start := time.Now()

	var out, errOut bytes.Buffer
	dl := osexec.CommandContext(ctx, goBin, "mod", "download", "-json", Module+"@"+Version)
	dl.Dir = os.TempDir() // outside any module, so no go.mod is consulted
	dl.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	dl.Stdout, dl.Stderr = &out, &errOut
	if err := dl.Run(); err != nil {
		return fmt.Errorf("go mod download %s@%s: %w: %s%s", Module, Version, ctxOr(ctx, err), errOut.String(), out.String())
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil {
		return fmt.Errorf("reading go mod download output: %w", err)
	}
	if mod.Error != "" || mod.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %s", Module, Version, mod.Error)
	}

	tmp := dst + ".tmp"
	b := osexec.CommandContext(ctx, goBin, "build", "-o", tmp,
		// as OpenTofu's release builds do, so tofu version prints Version
		// rather than Version-dev
		"-ldflags=-X github.com/opentofu/opentofu/version.dev=no", "./cmd/tofu")
	b.Dir = mod.Dir
	b.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on", "CGO_ENABLED=0", "GOWORK=off")
	b.Stdout, b.Stderr = progress, progress
	if err := b.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build ./cmd/tofu in %s: %w", mod.Dir, ctxOr(ctx, err))
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("moving the built tofu into place: %w", err)
	}
	fmt.Fprintf(progress, "built OpenTofu %s in %s: %s\n", Version, time.Since(start).Round(time.Second), dst)
	return nil
}

func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}
