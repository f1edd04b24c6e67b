package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO named main.tf, a file nested 100,000 levels deep and one over the
// size bound are refused with an error, quickly: the caller then treats
// every answer as a secret, and nothing hangs or crashes.
func TestSensitiveVariablesRefusesHostileFiles(t *testing.T) {
	cases := map[string]func(dir string) error{
		"fifo": func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "main.tf"), 0o600) },
		"deep": func(dir string) error {
			src := "locals {\n  x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n"
			return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o600)
		},
		"large": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "main.tf"), make([]byte, MaxConfigFileSize+1), 0o600)
		},
		"directory": func(dir string) error { return os.Mkdir(filepath.Join(dir, "x.tf"), 0o700) },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "vars.tf"), []byte("variable \"p\" {\n  sensitive = true\n}\n"), 0o600)
			if err := mk(dir); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := SensitiveVariables(dir); done <- err }()
			select {
			case err := <-done:
				if name != "directory" && err == nil {
					t.Error("no error")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("SensitiveVariables hung")
			}
		})
	}
}

func TestCheckNesting(t *testing.T) {
	if err := CheckNesting([]byte(strings.Repeat("{", MaxNesting) + strings.Repeat("}", MaxNesting))); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := CheckNesting([]byte("a\nb\n" + strings.Repeat("(", MaxNesting+1)))
	if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("past the limit: %v", err)
	}
}
