package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"embed"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/exec/tofubin"
	"github.com/switchtender/switchtender/server/config"
)

//go:embed demo
var demoFiles embed.FS

// demoFlags declares demo's flags; it returns them and where --data and
// --listen land.
func demoFlags() (*flag.FlagSet, *string, *string) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", "switchtender-demo", "the demo's data `DIR` (kept between runs)")
	listen := fs.String("listen", "127.0.0.1:2222", "the SSH listen `ADDR` (host:port)")
	return fs, dataDir, listen
}

// cmdDemo runs the control node on the embedded example: the spec's
// infra/network working directory and one of terraform_data resources, a
// data directory, an SSH listener on localhost, and two generated keys (a
// launcher, which your own ~/.ssh key joins when you have one, and an approver). It prints how
// to connect. Running it again reuses the data directory: runs, logs and
// state are kept.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir, listen := demoFlags()
	if err := fs.Parse(args); err != nil {
		return usageError{"demo: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("demo takes only flags, not %q; see `switchtender demo --help`", fs.Arg(0))}
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "listen" })
	addr := demoListen(dir, *listen, given)
	if err := portFree(addr); err != nil {
		return err
	}
	tofu, err := tofubin.Ensure(ctx, stderr)
	if err != nil {
		return fmt.Errorf("the demo needs OpenTofu: %w", err)
	}
	cfgPath, err := prepareDemo(dir, *listen)
	if err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	cfg.Server.SSHListen = addr
	g := guide{dir: dir, next: nextRunNumber(cfg.Server.DataDir), ownKey: ownKeyIn(cfg)}
	environ := withPath(os.Environ(), tofubin.PathWith(tofu, os.Getenv("PATH")))
	return serve(ctx, cfg, cfgPath, environ, stderr, func(addr string) {
		sshConfig, err := writeSSHConfig(dir, addr)
		if err != nil {
			fmt.Fprintf(stderr, "switchtender: %v\n", err)
			return
		}
		g.addr, g.sshConfig = addr, sshConfig
		g.write(stdout)
	})
}

// writeSSHConfig writes an OpenSSH client configuration with a host for each
// demo identity, so the printed commands stay short.
func writeSSHConfig(dir, addr string) (string, error) {
	host, port := splitHostPort(addr)
	var b strings.Builder
	// The SSH user name is not what identifies anyone (the key is); the
	// configured user's name is given so that it reads right.
	for _, h := range []struct{ host, user string }{{"launcher", "you"}, {"approver", "approver"}} {
		fmt.Fprintf(&b, "Host %s\n  HostName %s\n  Port %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  StrictHostKeyChecking accept-new\n  UserKnownHostsFile %s\n  LogLevel ERROR\n\n",
			h.host, host, port, h.user, filepath.Join(dir, "keys", h.host), filepath.Join(dir, "known_hosts"))
	}
	path := filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("writing the demo's ssh_config: %w", err)
	}
	return path, nil
}

func splitHostPort(addr string) (string, string) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return addr, "22"
	}
	return addr[:i], addr[i+1:]
}

func withPath(env []string, path string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "PATH="+path)
}

// prepareDemo lays out the demo's data directory once: the example project,
// the keys and the configuration. Existing files are kept, so state, keys
// and an edited configuration survive a restart. It returns the
// configuration's path.
func prepareDemo(dir, listen string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		return "", fmt.Errorf("creating the demo directory: %w", err)
	}
	project := filepath.Join(dir, "project")
	if err := writeDemoProject(project); err != nil {
		return "", fmt.Errorf("writing the example project: %w", err)
	}
	launcher, err := demoKey(filepath.Join(dir, "keys", "launcher"))
	if err != nil {
		return "", err
	}
	approver, err := demoKey(filepath.Join(dir, "keys", "approver"))
	if err != nil {
		return "", err
	}
	cfgPath := filepath.Join(dir, "switchtender.hcl")
	if _, err := os.Stat(cfgPath); err == nil {
		return cfgPath, nil
	}
	cfg, err := demoConfig(map[string]string{
		"Listen": listen, "DataDir": filepath.Join(dir, "data"), "Project": project,
		"LauncherKeys": quotedKeys(append([]string{launcher}, ownPublicKeys()...)), "ApproverKey": approver,
	})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return "", fmt.Errorf("writing the demo configuration: %w", err)
	}
	return cfgPath, nil
}

// writeDemoProject copies the embedded example project to project, keeping
// every file already there.
func writeDemoProject(project string) error {
	return fs.WalkDir(demoFiles, "demo/project", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(project, strings.TrimPrefix(p, "demo/project"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		b, err := demoFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// ownPublicKeys is the authorized_keys line of each of the user's own
// ~/.ssh/id_{ed25519,ecdsa,rsa}.pub that parses, so the demo lets them in
// with their usual key too.
func ownPublicKeys() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	var keys []string
	for _, n := range []string{"id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub"} {
		if b, err := os.ReadFile(filepath.Join(home, ".ssh", n)); err == nil {
			if k, _, _, _, err := ssh.ParseAuthorizedKey(b); err == nil {
				keys = append(keys, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))))
			}
		}
	}
	return keys
}

// quotedKeys is keys as a comma-separated list of HCL strings.
func quotedKeys(keys []string) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(quoted, ", ")
}

// demoConfig is the embedded configuration template filled with values.
func demoConfig(values map[string]string) ([]byte, error) {
	tmplText, err := demoFiles.ReadFile("demo/switchtender.hcl.tmpl")
	if err != nil {
		return nil, err
	}
	t := template.Must(template.New("config").Parse(string(tmplText)))
	var buf bytes.Buffer
	if err := t.Execute(&buf, values); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// demoKey returns the authorized_keys line of an ed25519 key pair at path
// (private, mode 0600) and path.pub, generating it the first time.
func demoKey(path string) (string, error) {
	if b, err := os.ReadFile(path + ".pub"); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generating a demo key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "switchtender demo "+filepath.Base(path))
	if err != nil {
		return "", fmt.Errorf("encoding a demo key: %w", err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", fmt.Errorf("writing a demo key: %w", err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
	if err := os.WriteFile(path+".pub", []byte(line+" switchtender-demo-"+filepath.Base(path)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing a demo key: %w", err)
	}
	return line, nil
}
