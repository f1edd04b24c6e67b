package seal

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"filippo.io/age"
)

func mustKey(t *testing.T) *Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func planBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDigest(t *testing.T) {
	// sha256("abc") from FIPS 180-2.
	want := "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Digest([]byte("abc")); got != want {
		t.Fatalf("Digest(abc) = %s, want %s", got, want)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := FileDigest(p)
	if err != nil || got != want {
		t.Fatalf("FileDigest = %s, %v; want %s", got, err, want)
	}
	if _, err := FileDigest(p + ".missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FileDigest(missing) error = %v, want ErrNotExist", err)
	}
	if err := CheckDigest(want); err != nil {
		t.Fatalf("CheckDigest(valid): %v", err)
	}
	for _, bad := range []string{"", "sha256:", "ba7816bf", "sha256:" + strings.ToUpper(want[7:]), "md5:" + want[7:], want + "0"} {
		if CheckDigest(bad) == nil {
			t.Errorf("CheckDigest(%q) accepted", bad)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	k := mustKey(t)
	for _, n := range []int{0, 1, 64 << 10, 64<<10 + 1, 3 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			plain := planBytes(t, n)
			blob, err := Seal(k, "42", plain)
			if err != nil {
				t.Fatal(err)
			}
			if n > 16 && bytes.Contains(blob, plain[:16]) {
				t.Fatal("blob contains plaintext")
			}
			got, digest, err := Open(k, "42", blob)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatal("plaintext differs after round trip")
			}
			if digest != Digest(plain) {
				t.Fatalf("digest %s, want %s", digest, Digest(plain))
			}
		})
	}
}

func TestWrongRun(t *testing.T) {
	k := mustKey(t)
	blob, err := Seal(k, "7", []byte("plan of run 7"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(k, "8", blob)
	if !errors.Is(err, ErrWrongRun) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrWrongKey) {
		t.Fatalf("Open for another run: %v, want only ErrWrongRun", err)
	}
	if !strings.Contains(err.Error(), "sealed for run 7") {
		t.Fatalf("error does not name the bound run: %v", err)
	}
	// A run ID that is a prefix of the bound one is another run too.
	blob, _ = Seal(k, "17", []byte("x"))
	if _, _, err := Open(k, "1", blob); !errors.Is(err, ErrWrongRun) {
		t.Fatalf("Open(1) of run 17's blob: %v, want ErrWrongRun", err)
	}
}

func TestTamperedByte(t *testing.T) {
	k := mustKey(t)
	plain := planBytes(t, 100<<10)
	blob, err := Seal(k, "1", plain)
	if err != nil {
		t.Fatal(err)
	}
	hdrEnd := bytes.Index(blob, []byte("\n---"))
	if hdrEnd < 0 {
		t.Fatal("no age header MAC line")
	}
	// Positions: in the header MAC, in the nonce, in the first and the last
	// payload chunk, and the very last byte (the final chunk's tag).
	positions := []int{hdrEnd + 6, hdrEnd + 50, hdrEnd + 200, len(blob) - 100, len(blob) - 1}
	for _, pos := range positions {
		bad := bytes.Clone(blob)
		bad[pos] ^= 0x01
		got, _, err := Open(k, "1", bad)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("flipped byte %d of %d: err = %v, want ErrCorrupt", pos, len(blob), err)
		}
		if got != nil {
			t.Errorf("flipped byte %d: plaintext returned with error", pos)
		}
	}
}

func TestTruncated(t *testing.T) {
	k := mustKey(t)
	blob, err := Seal(k, "1", planBytes(t, 200<<10))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, len(blob) / 2, len(blob) - 1, len(blob) - 64<<10 - 16} {
		_, _, err := Open(k, "1", blob[:n])
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d of %d: err = %v, want ErrCorrupt", n, len(blob), err)
		}
	}
	if _, _, err := Open(k, "1", []byte("not an age file at all")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: err = %v, want ErrCorrupt", err)
	}
}

func TestWrongKey(t *testing.T) {
	k1, k2 := mustKey(t), mustKey(t)
	blob, err := Seal(k1, "1", []byte("plan"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(k2, "1", blob)
	if !errors.Is(err, ErrWrongKey) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrWrongRun) {
		t.Fatalf("Open with another key: %v, want only ErrWrongKey", err)
	}
}

// A payload that age decrypts fine but whose bound digest does not match the
// plaintext (as a buggy or hostile sealer could make) is ErrCorrupt.
func TestBoundDigestMismatch(t *testing.T) {
	k := mustKey(t)
	blob, err := Seal(k, "1", []byte("real plan"))
	if err != nil {
		t.Fatal(err)
	}
	// Re-seal a payload whose header names a different digest.
	var forged bytes.Buffer
	forged.WriteString(headerMagic + "run 1\ndigest " + Digest([]byte("other plan")) + "\n\n" + "real plan")
	forgedBlob, err := sealRaw(k, forged.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(k, "1", forgedBlob); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("forged digest: err = %v, want ErrCorrupt", err)
	}
	if _, _, err := Open(k, "1", blob); err != nil {
		t.Fatalf("genuine blob: %v", err)
	}
	// A payload without the header is ErrCorrupt too.
	noHdr, _ := sealRaw(k, []byte("just a plan"))
	if _, _, err := Open(k, "1", noHdr); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("headerless payload: err = %v, want ErrCorrupt", err)
	}
}

func TestSealToDeliveryKey(t *testing.T) {
	worker := mustKey(t)
	plain := []byte("plan for the eu pool")
	blob, err := SealTo(worker.Recipient(), "5", plain)
	if err != nil {
		t.Fatal(err)
	}
	got, digest, err := Open(worker, "5", blob)
	if err != nil || !bytes.Equal(got, plain) || digest != Digest(plain) {
		t.Fatalf("Open of SealTo blob: %q %s %v", got, digest, err)
	}
	if _, _, err := Open(mustKey(t), "5", blob); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another worker key: %v, want ErrWrongKey", err)
	}
	for _, bad := range []string{"", "age1notarecipient", worker.MarshalIdentity(), "ssh-ed25519 AAAA"} {
		_, err := SealTo(bad, "5", plain)
		if err == nil {
			t.Errorf("SealTo(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "AGE-SECRET-KEY-1") && bad == worker.MarshalIdentity() {
			t.Errorf("error echoes a secret identity: %v", err)
		}
	}
}

func TestRunIDChecked(t *testing.T) {
	k := mustKey(t)
	for _, id := range []string{"", "1\n2", "a b", strings.Repeat("9", 300)} {
		if _, err := Seal(k, id, []byte("p")); err == nil {
			t.Errorf("Seal with run ID %q accepted", id)
		}
	}
}

func TestKeyStringHidesSecret(t *testing.T) {
	k := mustKey(t)
	secret := k.MarshalIdentity()
	if !strings.HasPrefix(secret, "AGE-SECRET-KEY-1") || !strings.HasPrefix(k.Recipient(), "age1") {
		t.Fatalf("unexpected key forms %q %q", secret[:16], k.Recipient())
	}
	for _, s := range []string{k.String(), fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k), fmt.Sprintf("%v %+v", *k, *k)} {
		if strings.Contains(strings.ToUpper(s), "AGE-SECRET-KEY") || strings.Contains(s, secret[16:30]) {
			t.Fatalf("formatting reveals the secret: %s", s)
		}
	}
	k2, err := ParseKey(secret + "\n")
	if err != nil || k2.Recipient() != k.Recipient() {
		t.Fatalf("ParseKey round trip: %v", err)
	}
}

func TestKeyFilePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	path := filepath.Join(dir, "server.key")

	k, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("created key has mode %04o, want 0600", st.Mode().Perm())
	}
	dst, _ := os.Stat(dir)
	if dst.Mode().Perm() != 0o700 {
		t.Fatalf("created key directory has mode %04o, want 0700", dst.Mode().Perm())
	}
	content, _ := os.ReadFile(path)
	if !strings.Contains(string(content), "# public key: "+k.Recipient()) {
		t.Fatalf("key file lacks the public key comment:\n%s", content)
	}

	// 0600 accepted, and the same key comes back.
	again, err := LoadOrCreateKey(path)
	if err != nil || again.Recipient() != k.Recipient() {
		t.Fatalf("reload: %v (recipient %v vs %v)", err, again, k)
	}
	if l, err := LoadKey(path); err != nil || l.Recipient() != k.Recipient() {
		t.Fatalf("LoadKey: %v", err)
	}

	// 0644 refused, with the mode and the fix in the message; not replaced.
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o620, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		for name, load := range map[string]func(string) (*Key, error){"LoadKey": LoadKey, "LoadOrCreateKey": LoadOrCreateKey} {
			_, err := load(path)
			if err == nil {
				t.Fatalf("%s accepted mode %04o", name, mode)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%04o", mode)) || !strings.Contains(err.Error(), "chmod 600") {
				t.Fatalf("%s error does not name mode and fix: %v", name, err)
			}
		}
	}
	os.Chmod(path, 0o600)
	if l, _ := LoadKey(path); l == nil || l.Recipient() != k.Recipient() {
		t.Fatal("refusal replaced the key file")
	}
}

func TestKeyFileMalformed(t *testing.T) {
	dir := t.TempDir()
	k := mustKey(t)
	cases := map[string]string{
		"empty":     "",
		"comments":  "# only a comment\n",
		"garbage":   "hello world\n",
		"recipient": k.Recipient() + "\n",
		"two":       k.MarshalIdentity() + "\n" + mustKey(t).MarshalIdentity() + "\n",
		"broken":    "AGE-SECRET-KEY-1QQQQ\n",
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKey(p)
		if err == nil {
			t.Errorf("%s: malformed key accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("%s: malformed key file was rewritten", name)
		}
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadKey(missing) = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("LoadKey created a file")
	}
}

func TestWipe(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan")
	if err := os.WriteFile(p, planBytes(t, 200<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	// Keep a second name on the same inode to observe the overwrite.
	link := filepath.Join(dir, "observer")
	if err := os.Link(p, link); err != nil {
		t.Fatal(err)
	}
	if err := Wipe(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file still there after Wipe: %v", err)
	}
	left, _ := os.ReadFile(link)
	if len(left) != 200<<10 || !bytes.Equal(left, make([]byte, len(left))) {
		t.Fatalf("contents not zeroed (len %d)", len(left))
	}
	if err := Wipe(p); err != nil {
		t.Fatalf("Wipe of a missing file: %v", err)
	}

	// A symbolic link is removed; its target is untouched.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep me"), 0o600)
	sl := filepath.Join(dir, "sl")
	os.Symlink(target, sl)
	if err := Wipe(sl); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep me" {
		t.Fatalf("Wipe through a symlink changed the target: %q", got)
	}
	if _, err := os.Lstat(sl); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("symlink not removed")
	}
	if err := Wipe(dir); err == nil {
		t.Fatal("Wipe of a directory accepted")
	}
}

func TestWipeTree(t *testing.T) {
	root := t.TempDir()
	files := map[string]bool{ // path -> should be wiped
		"runs/1/plan":        true,
		"runs/2/plan":        true,
		"runs/2/module/plan": true,
		"runs/2/notes.txt":   false,
		"plan.sealed":        false,
		"runs/3/tfplan":      false,
	}
	for rel := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A symlinked directory outside root must not be walked into.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "plan"), []byte("outside"), 0o600)
	os.Symlink(outside, filepath.Join(root, "runs", "link"))

	n, err := WipeTree(root, func(name string) bool { return name == "plan" })
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("wiped %d files, want 3", n)
	}
	for rel, gone := range files {
		_, err := os.Stat(filepath.Join(root, rel))
		if gone != errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: exists=%v, want wiped=%v", rel, err == nil, gone)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "plan")); string(got) != "outside" {
		t.Error("WipeTree followed a symlink out of its tree")
	}
	if n, err := WipeTree(filepath.Join(root, "missing"), func(string) bool { return true }); n != 0 || err != nil {
		t.Fatalf("missing dir: %d, %v", n, err)
	}
}

func TestWriteFile(t *testing.T) {
	base := t.TempDir()
	priv := filepath.Join(base, "run-1")
	if err := os.Mkdir(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := WriteFile(priv, "plan", []byte("plaintext"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 || p != filepath.Join(priv, "plan") {
		t.Fatalf("wrote %s with mode %04o", p, st.Mode().Perm())
	}
	// Replacing keeps 0600 even if the old file was looser.
	os.Chmod(p, 0o644)
	if _, err := WriteFile(priv, "plan", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(p)
	got, _ := os.ReadFile(p)
	if st.Mode().Perm() != 0o600 || string(got) != "v2" {
		t.Fatalf("replace: mode %04o content %q", st.Mode().Perm(), got)
	}

	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	_, err = WriteFile(open, "plan", []byte("x"))
	if err == nil || !regexp.MustCompile(`0755.*chmod 700`).MatchString(err.Error()) {
		t.Fatalf("dir 0755: err = %v, want refusal naming mode and chmod 700", err)
	}
	if _, err := os.Stat(filepath.Join(open, "plan")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("file written into a readable directory")
	}
	if _, err := WriteFile(filepath.Join(base, "missing"), "plan", nil); err == nil {
		t.Fatal("missing dir accepted")
	}
	for _, name := range []string{"", ".", "..", "a/b", "../plan"} {
		if _, err := WriteFile(priv, name, nil); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(priv, "sl"))
	if _, err := WriteFile(priv, "sl", []byte("x")); err == nil {
		t.Fatal("symlink followed")
	}
	if _, err := os.Stat(filepath.Join(base, "elsewhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("symlink target created")
	}
}

// sealRaw encrypts payload to k with age, without the seal header.
func sealRaw(k *Key, payload []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := age.Encrypt(&out, k.id.Recipient())
	if err != nil {
		return nil, err
	}
	w.Write(payload)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
