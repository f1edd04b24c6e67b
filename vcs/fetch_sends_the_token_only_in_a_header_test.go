package vcs

import (
	"context"
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// gitServer serves the repository at dir over smart HTTP with git's own
// http-backend, answering 401 to any request without the Authorization
// header want; it records every header it was sent.
func gitServer(t *testing.T, dir, want string) (*httptest.Server, func() []string) {
	t.Helper()
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend is not at %s: %v", backend, err)
	}
	var mu sync.Mutex
	var seen []string
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="t"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, seen...) }
}

// TestAFetchSendsTheTokenInAHeaderAndWritesItNowhere guards the forge's
// token: FetchRef gives it to git in its environment as an HTTP header,
// so the fetch authenticates, yet the checkout's .git holds no trace of
// it and a failing fetch's error does not quote it.
func TestAFetchSendsTheTokenInAHeaderAndWritesItNowhere(t *testing.T) {
	t.Parallel()
	upstream := repo(t, map[string]string{"main.tf": "# one\n"})
	run(t, upstream, "checkout", "-q", "-b", "feature")
	if err := os.WriteFile(filepath.Join(upstream, "main.tf"), []byte("# two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, upstream, "commit", "-q", "-am", "two")
	head := strings.TrimSpace(run(t, upstream, "rev-parse", "HEAD"))
	run(t, upstream, "checkout", "-q", "main")
	header := "Authorization: token s3cret-forge-token"
	srv, seen := gitServer(t, filepath.Join(upstream, ".git"), "token s3cret-forge-token")

	checkout := repo(t, map[string]string{"main.tf": "# one\n"})
	run(t, checkout, "remote", "add", "origin", srv.URL+"/.git")
	if err := FetchRef(context.Background(), checkout, header, "+refs/heads/feature:refs/switchtender/pull/1"); err != nil {
		t.Fatalf("FetchRef: %v (headers seen %q)", err, seen())
	}
	if got, err := Resolve(context.Background(), checkout, "refs/switchtender/pull/1"); err != nil || got != head {
		t.Fatalf("fetched ref = %q, %v; want %s", got, err, head)
	}
	if b := grepTree(t, filepath.Join(checkout, ".git"), "s3cret-forge-token"); b != "" {
		t.Fatalf("the token is written in %s", b)
	}
	err := FetchRef(context.Background(), checkout, "Authorization: token s3cret-wrong", "+refs/heads/feature:refs/x")
	if err == nil || strings.Contains(err.Error(), "s3cret-wrong") {
		t.Fatalf("fetch with a wrong token: err = %v; want an error that does not quote the header", err)
	}
}

// grepTree names a file under dir holding s, or "".
func grepTree(t *testing.T, dir, s string) string {
	t.Helper()
	var found string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || found != "" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			found = p
		}
		return nil
	})
	return found
}

// TestFastForwardRefusesADirtyOrDivergedCheckout guards the merge's move
// of the checkout: local changes and a HEAD that is not behind the merge
// commit are refused, the checkout untouched; a checkout behind moves.
func TestFastForwardRefusesADirtyOrDivergedCheckout(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"main.tf": "# one\n"})
	base := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	run(t, dir, "checkout", "-q", "-b", "merged")
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# merged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "commit", "-q", "-am", "merged")
	merge := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	run(t, dir, "checkout", "-q", "main")
	ctx := context.Background()

	if err := os.WriteFile(filepath.Join(dir, "local.tf"), []byte("# local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := FastForward(ctx, dir, merge); !errors.Is(err, ErrDirty) {
		t.Fatalf("dirty checkout: err = %v, want ErrDirty", err)
	}
	if err := os.Remove(filepath.Join(dir, "local.tf")); err != nil {
		t.Fatal(err)
	}
	if files, err := ChangedFiles(ctx, dir, "main", merge); err != nil || len(files) != 1 || files[0] != "main.tf" {
		t.Fatalf("ChangedFiles = %v, %v; want [main.tf]", files, err)
	}
	if err := FastForward(ctx, dir, merge); err != nil {
		t.Fatalf("FastForward: %v", err)
	}
	if c, _ := Head(ctx, dir); c.SHA != merge {
		t.Fatalf("HEAD = %s, want the merge commit %s", c.SHA, merge)
	}
	if err := FastForward(ctx, dir, base); !errors.Is(err, ErrNotFastForward) {
		t.Fatalf("moving back to %s: err = %v, want ErrNotFastForward", base, err)
	}
}

// TestABranchNameFromAForgeCannotBecomeASecondRefspec guards the fetch of
// a pull request's base branch: a name the forge sent goes into a refspec,
// so one holding a colon, a space, a leading dash or ".." is refused, and
// ordinary names pass.
func TestABranchNameFromAForgeCannotBecomeASecondRefspec(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "release/1.2", "feature_x-y"} {
		if err := CheckBranch(ok); err != nil {
			t.Errorf("CheckBranch(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "main:refs/heads/evil", "-upload-pack=x", "a..b", "a b", "x.lock", "/abs", "tail/", "a//b", "ma\u00efn", "+main"} {
		if err := CheckBranch(bad); err == nil {
			t.Errorf("CheckBranch(%q) = nil, want a refusal", bad)
		}
	}
}
