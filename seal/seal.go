package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"filippo.io/age"
)

// Sentinel errors of [Open], usable with errors.Is. Each error Open returns
// wraps exactly one of them and says in words what happened.
var (
	// ErrWrongRun: the blob is intact but was sealed for another run (a
	// swapped blob); it must not be applied for this run.
	ErrWrongRun = errors.New("sealed plan belongs to another run")
	// ErrCorrupt: the blob is damaged, truncated, tampered with, not a
	// sealed plan at all, or its plaintext does not match the digest bound
	// inside it.
	ErrCorrupt = errors.New("sealed plan is damaged or was tampered with")
	// ErrWrongKey: the blob was not sealed to the key given to Open (for
	// example the server's key file was replaced since). Damage to the age
	// recipient stanza itself is indistinguishable from a wrong key and is
	// reported as this error too.
	ErrWrongKey = errors.New("sealed plan was not sealed to this key")
)

// headerMagic starts the header inside the encrypted payload:
//
//	switchtender-seal/1\n
//	run <runID>\n
//	digest sha256:<64 hex>\n
//	\n
//	<plaintext>
const headerMagic = "switchtender-seal/1\n"

// maxRunIDLen bounds the run ID bound into a seal.
const maxRunIDLen = 256

// Digest returns the digest of b as "sha256:" followed by 64 lowercase hex
// digits, the form approvals bind (spec: "the approval binds the plan file's
// digest").
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FileDigest returns [Digest] of the file at path, reading it as a stream.
func FileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("digest of plan file: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("digest of plan file %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CheckDigest reports whether s has the form [Digest] returns
// ("sha256:" and 64 lowercase hex digits), with an error saying what is wrong
// and what is expected. Use it on digests people type (approve --digest).
func CheckDigest(s string) error {
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return fmt.Errorf("digest %q does not start with \"sha256:\"; give it as shown with the proposal, sha256:<64 hex digits>", s)
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("digest %q holds %q; want 64 lowercase hex digits 0-9a-f after \"sha256:\": copy the digest the proposal shows (show RUN)", s, c)
		}
	}
	if len(hexPart) != 64 {
		return fmt.Errorf("digest %q has %d hex digits after \"sha256:\", want 64: copy the whole digest the proposal shows (show RUN)", s, len(hexPart))
	}
	return nil
}

func checkRunID(runID string) error {
	if runID == "" {
		return errors.New("run ID is empty")
	}
	if len(runID) > maxRunIDLen {
		return fmt.Errorf("run ID is %d bytes long, longer than %d", len(runID), maxRunIDLen)
	}
	for _, r := range runID {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("run ID %q holds white space or a control character", runID)
		}
	}
	return nil
}

// Seal encrypts plaintext (a saved plan file) to k's recipient with age. The
// encrypted payload starts with a header binding the blob to runID and to
// [Digest](plaintext), so [Open] refuses it for another run. runID must be
// non-empty, at most 256 bytes, without white space or control characters.
func Seal(k *Key, runID string, plaintext []byte) ([]byte, error) {
	if k == nil {
		return nil, errors.New("sealing plan: no key")
	}
	return seal(k.id.Recipient(), runID, plaintext)
}

// SealTo is [Seal] to a public age X25519 recipient ("age1..."), a relay
// pool's delivery key; the pool's workers [Open] it with the matching
// identity. A recipient that does not parse is an error saying what is
// expected.
func SealTo(recipient string, runID string, plaintext []byte) ([]byte, error) {
	r, err := ParseRecipient(recipient)
	if err != nil {
		return nil, fmt.Errorf("sealing plan: %w", err)
	}
	return seal(r, runID, plaintext)
}

// ParseRecipient parses a public age X25519 recipient ("age1..."), such as
// a pool's delivery_key, with an error that names what was given and what is
// expected.
func ParseRecipient(recipient string) (*age.X25519Recipient, error) {
	s := strings.TrimSpace(recipient)
	if s == "" {
		return nil, errors.New("delivery key is empty; set it to the age recipient (age1...) whose identity the pool's workers hold")
	}
	if strings.HasPrefix(s, "AGE-SECRET-KEY-") {
		return nil, errors.New("delivery key is a secret identity (AGE-SECRET-KEY-...), not a recipient; give the public recipient (age1...) and keep the identity on the workers")
	}
	r, err := age.ParseX25519Recipient(s)
	if err != nil {
		return nil, fmt.Errorf("delivery key %q is not an age X25519 recipient (age1... as age-keygen -y prints it): %w", s, err)
	}
	return r, nil
}

func seal(r age.Recipient, runID string, plaintext []byte) ([]byte, error) {
	if err := checkRunID(runID); err != nil {
		return nil, fmt.Errorf("sealing plan: %w", err)
	}
	var out bytes.Buffer
	out.Grow(len(plaintext) + 512)
	w, err := age.Encrypt(&out, r)
	if err != nil {
		return nil, fmt.Errorf("sealing plan of run %s: %w", runID, err)
	}
	hdr := headerMagic + "run " + runID + "\ndigest " + Digest(plaintext) + "\n\n"
	if _, err := io.WriteString(w, hdr); err != nil {
		return nil, fmt.Errorf("sealing plan of run %s: %w", runID, err)
	}
	if _, err := w.Write(plaintext); err != nil {
		return nil, fmt.Errorf("sealing plan of run %s: %w", runID, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("sealing plan of run %s: %w", runID, err)
	}
	return out.Bytes(), nil
}

// Open decrypts a blob made by [Seal] or [SealTo] with k, checks that the
// run bound inside it is runID and that the plaintext's digest equals the
// bound digest, and returns the plaintext and its digest ("sha256:<hex>").
//
// Errors wrap one sentinel: [ErrWrongKey] when k is not the key it was sealed
// to; [ErrCorrupt] when it is damaged, truncated, tampered with or not a
// sealed plan; [ErrWrongRun] when it is intact but bound to another run. On
// error no plaintext is returned.
func Open(k *Key, runID string, blob []byte) (plaintext []byte, digest string, err error) {
	if k == nil {
		return nil, "", errors.New("opening sealed plan: no key")
	}
	if err := checkRunID(runID); err != nil {
		return nil, "", fmt.Errorf("opening sealed plan: %w", err)
	}
	r, err := age.Decrypt(bytes.NewReader(blob), k.id)
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			return nil, "", fmt.Errorf("opening sealed plan of run %s: %w (key %s); it was sealed with a different key, so it cannot be applied: plan again", runID, ErrWrongKey, k.Recipient())
		}
		return nil, "", fmt.Errorf("opening sealed plan of run %s: %w (age header: %v); plan again", runID, ErrCorrupt, err)
	}
	payload, err := io.ReadAll(r)
	if err != nil {
		clear(payload)
		return nil, "", fmt.Errorf("opening sealed plan of run %s: %w (payload: %v); plan again", runID, ErrCorrupt, err)
	}
	boundRun, boundDigest, body, err := parseHeader(payload)
	if err != nil {
		clear(payload)
		return nil, "", fmt.Errorf("opening sealed plan of run %s: %w (%v)", runID, ErrCorrupt, err)
	}
	if boundRun != runID {
		clear(payload)
		return nil, "", fmt.Errorf("opening sealed plan of run %s: %w: it was sealed for run %s, so it is refused", runID, ErrWrongRun, boundRun)
	}
	got := Digest(body)
	if got != boundDigest {
		clear(payload)
		return nil, "", fmt.Errorf("opening sealed plan of run %s: %w: its plan file has digest %s but %s was sealed", runID, ErrCorrupt, got, boundDigest)
	}
	return body, got, nil
}

func parseHeader(p []byte) (runID, digest string, body []byte, err error) {
	rest, ok := bytes.CutPrefix(p, []byte(headerMagic))
	if !ok {
		return "", "", nil, errors.New("payload has no switchtender seal header")
	}
	line := func(prefix string) (string, error) {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 || i > maxRunIDLen+len(prefix)+8 {
			return "", fmt.Errorf("seal header line %q missing", strings.TrimSpace(prefix))
		}
		v, ok := bytes.CutPrefix(rest[:i], []byte(prefix))
		if !ok {
			return "", fmt.Errorf("seal header line %q missing", strings.TrimSpace(prefix))
		}
		rest = rest[i+1:]
		return string(v), nil
	}
	if runID, err = line("run "); err != nil {
		return "", "", nil, err
	}
	if digest, err = line("digest "); err != nil {
		return "", "", nil, err
	}
	if CheckDigest(digest) != nil {
		return "", "", nil, errors.New("seal header digest malformed")
	}
	if len(rest) == 0 || rest[0] != '\n' {
		return "", "", nil, errors.New("seal header not terminated")
	}
	return runID, digest, rest[1:], nil
}
