package testkit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/switchtender/switchtender/seal"
)

// Key is an SSH key: its signer, its authorized_keys line and its private
// key in OpenSSH PEM form.
type Key struct {
	Signer gossh.Signer
	Line   string
	PEM    []byte
}

// NewKey makes a fresh ed25519 key; it fails t if it cannot.
func NewKey(t testing.TB) Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))
	return Key{Signer: signer, Line: line, PEM: pem.EncodeToMemory(blk)}
}

// NewDeliveryKey writes a pool delivery identity into dir, as keygen pool
// does, and returns its path and recipient.
func NewDeliveryKey(t testing.TB, dir string) (path, recipient string) {
	t.Helper()
	path = filepath.Join(dir, "pool.key")
	k, err := seal.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, k.Recipient()
}

// Dial opens an SSH connection to addr as user with signer, trusting any
// host key, within 10 seconds.
func Dial(addr, user string, signer gossh.Signer) (*gossh.Client, error) {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User:            user,
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("dialling %s as %s: %w", addr, user, err)
	}
	return c, nil
}

// KnownHosts writes dir/known_hosts holding the host key of the SSH server
// at addr, as ssh-keyscan would (it logs in as user with signer to learn
// it), and returns the file's path.
func KnownHosts(t testing.TB, addr, user string, signer gossh.Signer, dir string) string {
	t.Helper()
	var host gossh.PublicKey
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error { host = k; return nil }, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	path := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, host) + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ShellJoin quotes args for a POSIX shell and joins them with spaces: an
// SSH command line whose words the server splits back into args.
func ShellJoin(args []string) string {
	var parts []string
	for _, a := range args {
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}

// SSHStdin runs the command args (quoted by ShellJoin) in a new session
// on client with stdin as its standard input, and returns its stdout,
// stderr and exit status; an error that is no exit status fails t.
func SSHStdin(t testing.TB, client *gossh.Client, stdin string, args ...string) (string, string, int) {
	t.Helper()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdin, sess.Stdout, sess.Stderr = strings.NewReader(stdin), &out, &errOut
	code := 0
	if err := sess.Run(ShellJoin(args)); err != nil {
		code = ExitCodeOf(t, err)
	}
	return out.String(), errOut.String(), code
}

// ExitCodeOf is the exit status in err, an SSH session's Run error; an
// error that holds none fails t.
func ExitCodeOf(t testing.TB, err error) int {
	t.Helper()
	var ee *gossh.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("ssh: %v", err)
	}
	return ee.ExitStatus()
}

// Probe runs line, unsplit, as a raw command on a new session of client
// with stdin, bounded to 40 s: it returns stdout, stderr and the exit
// status, or -2 when the command did not end in time, -1 when it ended
// without an exit status and -3 when no session opened.
func Probe(client *gossh.Client, line, stdin string) (string, string, int) {
	sess, err := client.NewSession()
	if err != nil {
		return "", err.Error(), -3
	}
	defer sess.Close()
	var out, errOut strings.Builder
	sess.Stdout, sess.Stderr = &out, &errOut
	sess.Stdin = strings.NewReader(stdin)
	res := make(chan error, 1)
	go func() { res <- sess.Run(line) }()
	select {
	case err = <-res:
	case <-time.After(40 * time.Second):
		return out.String(), errOut.String(), -2
	}
	if err != nil {
		var ee *gossh.ExitError
		if errors.As(err, &ee) {
			return out.String(), errOut.String(), ee.ExitStatus()
		}
		return out.String(), errOut.String() + err.Error(), -1
	}
	return out.String(), errOut.String(), 0
}
