package testkit

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Gitea is a running Gitea of the tests: a fresh instance on a free
// loopback port, its data (SQLite database, repositories, log) in a
// temporary directory, stopped when the test ends. Its helpers fail the
// test that started it on any unexpected answer.
type Gitea struct {
	// URL is the instance's root, "http://127.0.0.1:PORT" (no trailing
	// slash); the API is under URL+"/api/v1", a repository clones from
	// URL+"/owner/name.git".
	URL string
	// Admin is the site administrator StartGitea created, with a token of
	// scope "all".
	Admin *GiteaUser
	// Dir is the instance's temporary directory: app.ini, data/, repos/,
	// log/gitea.log.
	Dir string
	// Started is how long the start took, from `gitea web` being started
	// to /api/v1/version answering (migrate and the admin's creation
	// before it not counted).
	Started time.Duration

	t    testing.TB
	bin  string
	env  []string
	cmd  *osexec.Cmd
	done chan struct{} // closed when the web process has exited
	http *http.Client
}

// GiteaUser is a Gitea account the harness made: its login name, e-mail,
// password and an API token (scope "all" unless made by CreateToken).
type GiteaUser struct {
	Name, Email, Password, Token string
}

// StartGitea starts a fresh Gitea (GiteaBinary, so it skips t when Gitea
// cannot be had) in t.TempDir(): it writes app.ini, runs `gitea migrate`
// and `gitea admin user create` (an administrator named "root" with a
// random password), starts `gitea web` in its own process group, waits up
// to a minute for /api/v1/version to answer, and makes the admin's token
// over the API with basic auth. The process group is killed when t ends;
// when t has failed, the tail of Gitea's log is printed first.
func StartGitea(t testing.TB) *Gitea {
	t.Helper()
	bin := GiteaBinary(t)
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skipf("Gitea needs git on the PATH: %v", err)
	}
	g := &Gitea{t: t, bin: bin, Dir: t.TempDir(), done: make(chan struct{}),
		http: &http.Client{Timeout: 30 * time.Second}}
	port := freeLoopbackPort(t)
	g.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	runUser := g.writeConfig(port)
	g.env = giteaEnv(g.Dir, runUser)
	begin := time.Now()
	g.run("migrate")
	out := g.run("admin", "user", "create", "--admin", "--username", "root", "--email", "root@example.com",
		"--random-password", "--must-change-password=false")
	g.Admin = &GiteaUser{Name: "root", Email: "root@example.com", Password: randomPassword(t, out)}
	g.startWeb()
	g.Admin.Token = g.CreateToken(g.Admin, "all")
	t.Logf("Gitea %s at %s, ready in %s (its API answered %s after `gitea web` started)",
		GiteaVersion, g.URL, time.Since(begin).Round(time.Millisecond), g.Started.Round(time.Millisecond))
	return g
}

// AdminToken is the administrator's API token (scope "all").
func (g *Gitea) AdminToken() string { return g.Admin.Token }

func freeLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free loopback port for Gitea: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// randomPassword reads the password `gitea admin user create
// --random-password` printed.
func randomPassword(t testing.TB, out string) string {
	t.Helper()
	const mark = "generated random password is '"
	_, rest, ok := strings.Cut(out, mark)
	pw, _, ok2 := strings.Cut(rest, "'")
	if !ok || !ok2 || pw == "" {
		t.Fatalf("gitea admin user create printed no random password:\n%s", out)
	}
	return pw
}

// giteaEnv is the environment of every gitea process: the test's, without
// its GITEA* and GIT_* variables, with HOME and USER of the instance
// (Gitea compares RUN_USER with $USER) and root allowed (the tests run as
// root in containers).
func giteaEnv(dir, runUser string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "GITEA") || strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "USER" {
			continue
		}
		env = append(env, e)
	}
	return append(env, "HOME="+filepath.Join(dir, "home"), "USER="+runUser,
		"GITEA_WORK_DIR="+dir, "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true")
}

// writeConfig writes Dir/app.ini for port and returns the RUN_USER it names.
func (g *Gitea) writeConfig(port int) string {
	g.t.Helper()
	u, err := user.Current()
	if err != nil {
		g.t.Fatalf("the current user, for Gitea's RUN_USER: %v", err)
	}
	for _, sub := range []string{"log", "home"} {
		if err := os.MkdirAll(filepath.Join(g.Dir, sub), 0o755); err != nil {
			g.t.Fatal(err)
		}
	}
	ini := strings.NewReplacer("{user}", u.Username, "{dir}", g.Dir, "{port}", strconv.Itoa(port),
		"{url}", g.URL+"/", "{static}", GiteaStaticRoot(),
		"{secret}", randomHex(g.t, 32), "{internal}", randomHex(g.t, 32)).Replace(giteaINI)
	if err := os.WriteFile(filepath.Join(g.Dir, "app.ini"), []byte(ini), 0o600); err != nil {
		g.t.Fatal(err)
	}
	return u.Username
}

// giteaINI is the instance's app.ini, its {placeholders} replaced by
// writeConfig; every path is under the instance's directory {dir}. Webhooks may go to loopback addresses ([security]
// ALLOWED_HOST_LIST; its [webhook] spelling is deprecated), queues live in
// memory, and nothing runs that a test does not ask for (no SSH, no mail,
// no cron, no actions, no packages, no indexer but the database's).
const giteaINI = `APP_NAME = Switchtender test forge
RUN_USER = {user}
RUN_MODE = prod
WORK_PATH = {dir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = {port}
ROOT_URL = {url}
DOMAIN = 127.0.0.1
STATIC_ROOT_PATH = {static}
APP_DATA_PATH = {dir}/data
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
GRACEFUL_HAMMER_TIME = 3s

[database]
DB_TYPE = sqlite3
PATH = {dir}/data/gitea.db

[security]
INSTALL_LOCK = true
SECRET_KEY = {secret}
INTERNAL_TOKEN = {internal}
ALLOWED_HOST_LIST = loopback
PASSWORD_CHECK_PWN = false

[service]
DISABLE_REGISTRATION = true
ENABLE_CAPTCHA = false
REQUIRE_SIGNIN_VIEW = false
DEFAULT_KEEP_EMAIL_PRIVATE = false
ENABLE_NOTIFY_MAIL = false

[repository]
ROOT = {dir}/repos
DEFAULT_BRANCH = main

[webhook]
DELIVER_TIMEOUT = 3

[queue]
TYPE = channel
LENGTH = 1000

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[mailer]
ENABLED = false

[oauth2]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[session]
PROVIDER = memory

[log]
MODE = file
LEVEL = Info
ROOT_PATH = {dir}/log
`

// run runs one gitea subcommand to its end and returns its output.
func (g *Gitea) run(args ...string) string {
	g.t.Helper()
	cmd := osexec.Command(g.bin, append([]string{"--config", filepath.Join(g.Dir, "app.ini"), "--work-path", g.Dir}, args...)...)
	cmd.Dir, cmd.Env = g.Dir, g.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("gitea %s: %v\n%s\n%s", args[0], err, out, g.LogTail(40))
	}
	return string(out)
}

// startWeb starts `gitea web` and waits for its API to answer.
func (g *Gitea) startWeb() {
	g.t.Helper()
	out, err := os.Create(filepath.Join(g.Dir, "log", "web.out"))
	if err != nil {
		g.t.Fatal(err)
	}
	g.cmd = osexec.Command(g.bin, "--config", filepath.Join(g.Dir, "app.ini"), "--work-path", g.Dir, "web")
	g.cmd.Dir, g.cmd.Env = g.Dir, g.env
	g.cmd.Stdout, g.cmd.Stderr = out, out
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := g.cmd.Start(); err != nil {
		out.Close()
		g.t.Fatalf("starting gitea web: %v", err)
	}
	go func() { g.cmd.Wait(); out.Close(); close(g.done) }()
	g.t.Cleanup(g.stop)
	if err := g.waitForAPI(time.Minute); err != nil {
		g.t.Fatalf("gitea web: %v", err)
	}
	g.Started = time.Since(start)
}

func (g *Gitea) waitForAPI(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		select {
		case <-g.done:
			return fmt.Errorf("exited before its API answered (%v)", g.cmd.ProcessState)
		default:
		}
		resp, err := g.http.Get(g.URL + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("its API did not answer at %s within %s (last: %v)", g.URL, d, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// stop prints the log's tail when the test failed, then ends the web
// process: SIGTERM to its process group (Gitea ends the git processes it
// runs, which have groups of their own), SIGKILL after 10 s, and a kill of
// any process still working in Dir.
func (g *Gitea) stop() {
	if g.t.Failed() {
		g.t.Logf("the tail of Gitea's log (%s):\n%s", filepath.Join(g.Dir, "log", "gitea.log"), g.LogTail(60))
	}
	pgid := g.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-g.done
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // anything left in the group
	for _, pid := range processesIn(g.Dir) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// processesIn lists the processes whose working directory is dir or under
// it: the git processes a killed Gitea left.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator))) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// LogTail returns the last n lines of Gitea's log file and of the web
// process's own output.
func (g *Gitea) LogTail(n int) string {
	var b strings.Builder
	for _, name := range []string{"gitea.log", "web.out"} {
		data, err := os.ReadFile(filepath.Join(g.Dir, "log", name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "== %s ==\n%s\n", name, strings.Join(lines, "\n"))
	}
	return b.String()
}

// GiteaMemory is the web process's memory, in bytes: resident now, at its
// peak, and the part of the resident set that is its own (anonymous: heap
// and stacks) rather than file pages of the binary that every instance
// shares through the page cache.
type GiteaMemory struct {
	RSS, Peak, Anon int64
}

// Memory reads the web process's memory from /proc/PID/status (VmRSS,
// VmHWM, RssAnon). Linux only.
func (g *Gitea) Memory() (GiteaMemory, error) {
	var m GiteaMemory
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return m, fmt.Errorf("reading Gitea's memory use: %w", err)
	}
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.Peak, "RssAnon": &m.Anon}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		if p := fields[k]; p != nil {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			*p = kb << 10
		}
	}
	if m.RSS == 0 {
		return m, errors.New("reading Gitea's memory use: no VmRSS in /proc/PID/status")
	}
	return m, nil
}
