package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A configuration nested 100,000 levels deep, one too large, one with too
// many blocks and a FIFO are refused with an error (file:line where there is
// one), never a crash or a hang.
func TestHostileConfigurationsAreRefusedWithoutACrash(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := write("deep.hcl", "server {\n  max_parallel = "+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+"\n}\n")
	if _, err := Load(deep); err == nil || !strings.Contains(err.Error(), "deep.hcl:2,") || !strings.Contains(err.Error(), "Nested too deeply") {
		t.Errorf("deep: %v", err)
	}
	blocks := write("blocks.hcl", strings.Repeat("queue \"q\" {}\n", MaxBlocks+1))
	if _, err := Load(blocks); err == nil || !strings.Contains(err.Error(), "Too many blocks") {
		t.Errorf("blocks: %v", err)
	}
	large := write("large.hcl", "# "+strings.Repeat("x", MaxFileSize)+"\n")
	if _, err := Load(large); err == nil || !strings.Contains(err.Error(), "large") {
		t.Errorf("large: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load hung on a FIFO")
	}
}

// FuzzParse: no configuration text panics the parser or hangs it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"server {\n  max_parallel = 2\n}\n",
		"project \"p\" {\n  path = \".\"\n}\ntemplate \"t\" {\n  project = \"p\"\n  command = \".\"\n  survey \"a\" {\n    type = \"choice\"\n    choices = [\"x\"]\n  }\n}\n",
		"rule \"r\" {\n  max_destroy = 0\n  approvers = [\"a\"]\n}\nuser \"a\" {\n  public_key = \"ssh-ed25519 AAAA\"\n}\n",
		"credential \"c\" {\n  command = [\"x\"]\n  env_var = \"V\"\n}\n",
		"{{{{", "x = [[[[", "template \"t\" { survey \"s\" { default = {a = [1, {b = null}]} } }",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		_, _ = Parse([]byte(src), "fuzz.hcl", dir)
	})
}
