// Package seal seals and unseals saved plan files, computes their digests and
// wipes their plaintext.
//
// A plan file holds the values the configuration was planned with, sensitive
// ones included, so it is handled as a secret (spec, "A plan file holds the
// values ... handled as a secret"; DESIGN invariants 1 and 2). At rest it is
// sealed with the server's age X25519 key ([Seal], [Open]); across the relay it
// is sealed to a pool's delivery key ([SealTo]). Inside the encrypted payload
// a small header binds the blob to its run and to the digest of the plan file,
// so a blob of another run, or a plan that is not the one approved, is refused.
// Plaintext is written only into private directories ([WriteFile]) and wiped
// when a tool is done with it ([Wipe], [WipeTree]).
package seal

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"
)

// Key is an age X25519 identity: the server's sealing key, or a relay pool's
// delivery identity held by its workers. Printing a Key with fmt (%v, %s, %#v)
// shows only its public recipient, never the secret.
type Key struct {
	id *age.X25519Identity
}

// GenerateKey returns a new random X25519 key.
func GenerateKey() (*Key, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, fmt.Errorf("generating age key: %w", err)
	}
	return &Key{id: id}, nil
}

// ParseKey parses the text of an age identity ("AGE-SECRET-KEY-1...", as
// [Key.MarshalIdentity] writes it). Surrounding white space is ignored. A
// string that is not an X25519 identity is an error that says so (it never
// echoes the input, which may be a secret).
func ParseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "AGE-SECRET-KEY-1") {
		return nil, errors.New("not an age X25519 identity: it should be one line starting with AGE-SECRET-KEY-1 (create one with `switchtender keygen` or age-keygen)")
	}
	id, err := age.ParseX25519Identity(s)
	if err != nil {
		return nil, fmt.Errorf("not a valid age X25519 identity (it starts with AGE-SECRET-KEY-1 but does not decode): %w", err)
	}
	return &Key{id: id}, nil
}

// Recipient returns the public half of the key, an age recipient "age1...".
// It is what [SealTo] takes and what a pool's delivery_key is set to.
func (k *Key) Recipient() string { return k.id.Recipient().String() }

// String returns the recipient ("age1..."); it never reveals the secret.
func (k *Key) String() string { return k.Recipient() }

// GoString returns a description naming the recipient; it never reveals the
// secret, so %#v of a *Key is safe in logs.
func (k *Key) GoString() string { return "seal.Key{recipient: " + k.Recipient() + "}" }

// MarshalIdentity returns the secret identity "AGE-SECRET-KEY-1...". Write it
// only to a file of mode 0600.
func (k *Key) MarshalIdentity() string { return k.id.String() }

// LoadOrCreateKey returns the server's sealing key from the file at path,
// creating it if it does not exist: the parent directory with mode 0700 (when
// missing), the file with mode 0600 in the age-keygen format (comment lines
// with the creation time and the public key, then the identity line). The file
// is created atomically and never overwritten, so two processes starting at
// once end with the same key.
//
// An existing file is checked as [LoadKey] checks it: a file group or others
// can access is refused with an error that names its mode and says to
// `chmod 600` it; a malformed file is an error naming the file.
func LoadOrCreateKey(path string) (*Key, error) {
	k, err := LoadKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating directory for sealing key %s: %w", path, err)
	}
	k, err = GenerateKey()
	if err != nil {
		return nil, err
	}
	content := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n",
		time.Now().UTC().Format(time.RFC3339), k.Recipient(), k.MarshalIdentity())

	tmp, err := os.CreateTemp(dir, ".sealkey-*")
	if err != nil {
		return nil, fmt.Errorf("creating sealing key %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("creating sealing key %s: %w", path, err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("writing sealing key %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("writing sealing key %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing sealing key %s: %w", path, err)
	}
	// Link fails if path exists: another process won the race; use its key.
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadKey(path)
		}
		return nil, fmt.Errorf("creating sealing key %s: %w", path, err)
	}
	syncDir(dir)
	return k, nil
}

// LoadKey reads an age X25519 identity from the file at path (age-keygen
// format: '#' comment lines, blank lines, and exactly one AGE-SECRET-KEY-1
// line). It refuses a file whose mode lets group or others read, write or
// execute it, with an error that names the mode and says to `chmod 600` it; it
// refuses a directory or a malformed file with an error naming the file. A
// missing file returns an error satisfying errors.Is(err, fs.ErrNotExist).
func LoadKey(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening sealing key: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening sealing key: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("sealing key %s is not a regular file (%s); point the key path at a file", path, st.Mode().Type())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("sealing key %s has mode %04o, so group or others can access it; the key must be private to this user: run `chmod 600 %s`", path, perm, path)
	}
	var found []string
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if !strings.HasPrefix(s, "AGE-SECRET-KEY-1") {
			return nil, fmt.Errorf("sealing key %s:%d: not an age X25519 identity line (expected AGE-SECRET-KEY-1..., '#' comments or blank lines)", path, line)
		}
		found = append(found, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading sealing key %s: %w", path, err)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("sealing key %s holds no AGE-SECRET-KEY-1 line; delete the file to have a new key created (sealed plans then cannot be opened), or restore the key", path)
	case 1:
	default:
		return nil, fmt.Errorf("sealing key %s holds %d identities; it must hold exactly one", path, len(found))
	}
	k, err := ParseKey(found[0])
	if err != nil {
		return nil, fmt.Errorf("sealing key %s: %w", path, err)
	}
	return k, nil
}

// syncDir fsyncs a directory so a new or removed entry survives a crash.
// Errors are ignored: some file systems refuse to sync directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// deriveLabel starts the message [Key.Derive] authenticates, so a derived
// key can never equal an HMAC the key makes for anything else.
const deriveLabel = "switchtender derive/1\n"

// Derive returns a 32-byte secret for one purpose (a short label such as
// "plan fingerprint"), derived from the key's secret identity:
// HMAC-SHA256 keyed with the identity's text ("AGE-SECRET-KEY-1...") over
// "switchtender derive/1\n" followed by purpose. The same key and purpose
// always give the same bytes; another purpose or another key gives
// unrelated ones; the result neither reveals the identity nor lets one
// purpose's secret be computed from another's. The caller must treat the
// result as a secret too (it is one for whatever holds only it).
func (k *Key) Derive(purpose string) []byte {
	id := []byte(k.id.String())
	defer clear(id)
	m := hmac.New(sha256.New, id)
	m.Write([]byte(deriveLabel))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
