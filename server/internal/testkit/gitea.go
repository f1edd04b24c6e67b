package testkit

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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// GiteaVersion is the Gitea release the forge tests run, a version of the
// Go module GiteaModule.
const GiteaVersion = "v1.27.3"

// GiteaModule is the Go module Gitea is built from (its go.mod calls
// itself gitea.dev; the module proxy serves it under this path).
const GiteaModule = "code.gitea.io/gitea"

// giteaAssets are the directories of Gitea's module that a build without
// the bindata tag reads at run time from STATIC_ROOT_PATH: the templates,
// the options (locales, licences, readme and label templates), the public
// files and the themes under web_src.
var giteaAssets = []string{"templates", "options", "public", "web_src"}

// GiteaDir is the directory the built Gitea is cached in:
// tofubin.CacheDir()/gitea/<GiteaVersion> (~/.cache/switchtender/gitea/v1.27.3
// on Linux; $SWITCHTENDER_CACHE moves it as it moves OpenTofu's).
func GiteaDir() string {
	return filepath.Join(tofubin.CacheDir(), "gitea", GiteaVersion)
}

// GiteaBinaryPath is where the built binary of GiteaVersion is cached:
// GiteaDir()/gitea.
func GiteaBinaryPath() string { return filepath.Join(GiteaDir(), "gitea") }

// GiteaStaticRoot is the directory Gitea's STATIC_ROOT_PATH names: a copy
// of the module's templates, options, public and web_src directories kept
// next to the binary (GiteaDir()/static).
func GiteaStaticRoot() string { return filepath.Join(GiteaDir(), "static") }

// ErrGiteaUnavailable is wrapped by EnsureGitea's error when Gitea cannot
// be had on this machine at all (no go command, or no module proxy to
// download the module from), as opposed to a build that failed.
var ErrGiteaUnavailable = errors.New("gitea cannot be built here")

// EnsureGitea returns the path of the built Gitea binary (GiteaBinaryPath),
// building it first when it or its static root is missing: go mod download
// -json GiteaModule@GiteaVersion, a writable copy of the module directory
// (go install refuses the module's replace directives), CGO_ENABLED=0 go
// build there into a temporary name, the asset directories moved to
// GiteaStaticRoot, then a rename of the binary into place. It prints a line
// to progress before and after (nil: no progress); the build takes 1-3
// minutes on two cores and makes a binary of about 160 MB. The check and the
// build hold an exclusive lock on GiteaDir()/../.lock, so parallel test
// binaries build once. An error wraps ErrGiteaUnavailable when the go
// command or the module cannot be had; a cancelled ctx stops the build with
// an error wrapping ctx.Err().
func EnsureGitea(ctx context.Context, progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	bin := GiteaBinaryPath()
	if giteaBuilt() {
		return bin, nil
	}
	if err := os.MkdirAll(GiteaDir(), 0o755); err != nil {
		return "", fmt.Errorf("creating the Gitea cache directory: %w", err)
	}
	unlock, err := giteaLock(ctx, filepath.Join(filepath.Dir(GiteaDir()), ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if giteaBuilt() { // another process built it while we waited
		return bin, nil
	}
	if err := buildGitea(ctx, progress); err != nil {
		return "", fmt.Errorf("building Gitea %s from its Go module: %w", GiteaVersion, err)
	}
	return bin, nil
}

func giteaBuilt() bool {
	if giteaExecutable(GiteaBinaryPath()) != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(GiteaStaticRoot(), "templates"))
	return err == nil && fi.IsDir()
}

var giteaOnce struct {
	sync.Once
	bin string
	err error
}

// GiteaBinary returns the path of the built Gitea binary (its templates and
// options are under GiteaStaticRoot), building it once per machine when it
// is missing (EnsureGitea, waiting up to 30 minutes, progress on stderr).
// It skips t, saying why and how to build it, when Gitea cannot be had here
// (no go command or no module proxy), and fails t when the build fails.
func GiteaBinary(t testing.TB) string {
	t.Helper()
	giteaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		giteaOnce.bin, giteaOnce.err = EnsureGitea(ctx, os.Stderr)
	})
	if err := giteaOnce.err; errors.Is(err, ErrGiteaUnavailable) {
		t.Skipf("no Gitea %s to test against: %v. Build it where the go command and the Go module proxy are reachable: "+
			"`go run ./server/internal/testkit/cmd/giteabuild` puts it at %s", GiteaVersion, err, GiteaBinaryPath())
	} else if err != nil {
		t.Fatalf("no Gitea %s to test against: %v", GiteaVersion, err)
	}
	return giteaOnce.bin
}

func giteaExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// giteaLock takes an exclusive flock on path, waiting until ctx is done.
func giteaLock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the Gitea cache lock: %w", err)
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
			return nil, fmt.Errorf("waiting for another process building Gitea (lock %s): %w", path, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func buildGitea(ctx context.Context, progress io.Writer) error {
	goBin, err := osexec.LookPath("go")
	if err != nil {
		return fmt.Errorf("%w: the go command is needed to build Gitea: %w", ErrGiteaUnavailable, err)
	}
	fmt.Fprintf(progress, "building Gitea %s from its Go module once; this takes 1-3 minutes on 2 cores…\n", GiteaVersion)
	start := time.Now()
	modDir, err := downloadGitea(ctx, goBin)
	if err != nil {
		return err
	}
	stale, _ := filepath.Glob(filepath.Join(GiteaDir(), ".build-*")) // of a build killed midway; we hold the lock
	for _, d := range stale {
		os.RemoveAll(d)
	}
	work, err := os.MkdirTemp(GiteaDir(), ".build-")
	if err != nil {
		return fmt.Errorf("making the build directory: %w", err)
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "src")
	fmt.Fprintf(progress, "copying %s to %s (go install refuses its replace directives)\n", modDir, src)
	if err := os.CopyFS(src, os.DirFS(modDir)); err != nil {
		return fmt.Errorf("copying the module to a writable directory: %w", err)
	}
	tmp := filepath.Join(work, "gitea")
	b := osexec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", tmp,
		"-ldflags=-s -w -X main.Version="+strings.TrimPrefix(GiteaVersion, "v"), ".")
	b.Dir = src
	b.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GO111MODULE=on", "CGO_ENABLED=0", "GOWORK=off")
	b.Stdout, b.Stderr = progress, progress
	if err := b.Run(); err != nil {
		return fmt.Errorf("go build in %s: %w", src, giteaCtxOr(ctx, err))
	}
	if err := placeGitea(src, tmp); err != nil {
		return err
	}
	fmt.Fprintf(progress, "built Gitea %s in %s: %s\n", GiteaVersion, time.Since(start).Round(time.Second), GiteaBinaryPath())
	return nil
}

// downloadGitea runs go mod download -json and returns the module's
// directory in the module cache.
func downloadGitea(ctx context.Context, goBin string) (string, error) {
	var out, errOut bytes.Buffer
	dl := osexec.CommandContext(ctx, goBin, "mod", "download", "-json", GiteaModule+"@"+GiteaVersion)
	dl.Dir = os.TempDir() // outside any module, so no go.mod is consulted
	dl.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on", "GOWORK=off")
	dl.Stdout, dl.Stderr = &out, &errOut
	runErr := dl.Run()
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil && runErr == nil {
		return "", fmt.Errorf("reading go mod download output: %w", err)
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", GiteaModule, GiteaVersion, ctx.Err())
	}
	if runErr != nil || mod.Error != "" || mod.Dir == "" {
		msg := strings.TrimSpace(mod.Error + " " + errOut.String())
		return "", fmt.Errorf("%w: go mod download %s@%s failed (is the Go module proxy reachable? GOPROXY=%s): %s",
			ErrGiteaUnavailable, GiteaModule, GiteaVersion, goEnv(goBin, "GOPROXY"), msg)
	}
	return mod.Dir, nil
}

func goEnv(goBin, name string) string {
	out, err := osexec.Command(goBin, "env", name).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// placeGitea moves the asset directories of src to GiteaStaticRoot and the
// binary tmp to GiteaBinaryPath, the binary last: a binary in place means a
// complete build.
func placeGitea(src, tmp string) error {
	static := GiteaStaticRoot()
	if err := os.RemoveAll(static); err != nil {
		return fmt.Errorf("removing an old static root: %w", err)
	}
	staging := filepath.Join(filepath.Dir(tmp), "static")
	if err := os.Mkdir(staging, 0o755); err != nil {
		return fmt.Errorf("making the static root: %w", err)
	}
	for _, d := range giteaAssets {
		if err := os.Rename(filepath.Join(src, d), filepath.Join(staging, d)); err != nil {
			return fmt.Errorf("moving Gitea's %s into its static root: %w", d, err)
		}
	}
	if err := os.Rename(staging, static); err != nil {
		return fmt.Errorf("moving the static root into place: %w", err)
	}
	if err := os.Rename(tmp, GiteaBinaryPath()); err != nil {
		return fmt.Errorf("moving the built Gitea into place: %w", err)
	}
	return nil
}

func giteaCtxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}
