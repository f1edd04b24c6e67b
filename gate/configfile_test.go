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

func TestNestingAtTheLimit(t *testing.T) {
	if err := NestingDepth([]byte(strings.Repeat("{", MaxNesting)+strings.Repeat("}", MaxNesting)), MaxNesting); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := NestingDepth([]byte("a\nb\n"+strings.Repeat("(", MaxNesting+1)), MaxNesting)
	if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("past the limit: %v", err)
	}
}

// The chains an attacker used to pass a bracket count: unary operators,
// brackets hidden by comments or strings, JSON strings with brackets,
// conditionals, template directives, a heredoc holding a quote. Each is
// refused; ordinary configurations pass.
func TestNestingDepthHostile(t *testing.T) {
	const n = 300000
	hostile := map[string]string{
		"bang":       "x = " + strings.Repeat("!", n) + "true\n",
		"minus":      "x = " + strings.Repeat("- ", n) + "1\n",
		"comments":   "x = " + strings.Repeat("(\n# )\n", n) + "1" + strings.Repeat(")", n) + "\n",
		"strings":    "x = " + strings.Repeat(`("a)" + `, n) + "1" + strings.Repeat(")", n) + "\n",
		"json":       `{"a": ` + strings.Repeat(`["]", `, n) + `1` + strings.Repeat("]", n) + "}",
		"json-tmpl":  `{"a": "${` + strings.Repeat("!", n) + `true}"}`,
		"ternary":    "x = " + strings.Repeat("a ? b : ", n) + "c\n",
		"directives": "x = \"" + strings.Repeat("%{if a}", n) + strings.Repeat("%{endif}", n) + "\"\n",
		"interp":     "x = \"" + strings.Repeat("${\"", n) + strings.Repeat("\"}", n) + "\"\n",
		"heredoc":    "x = <<EOT\n\"\nEOT\ny = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n",
	}
	for name, src := range hostile {
		if err := NestingDepth([]byte(src), MaxNesting); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: %v", name, err)
		}
	}
	friendly := []string{
		"variable \"a\" {\n  type = list(map(string))\n  default = [{ a = \"b\" }]\n}\n",
		"x = -1\ny = !true\nz = a ? b : c\n# (((((\n/* [[[[ */\nw = \"((((\"\n",
		"x = <<-EOT\n  ${a} %{if b}c%{endif} ((((\n  EOT\ny = 1\n",
		"locals {\n  m = { for k, v in var.x : k => v if v != null }\n}\n",
	}
	for _, src := range friendly {
		if err := NestingDepth([]byte(src), 8); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// Counts never go below zero: chains cut by newlines, stray closers and
// ends of directives without a start cannot buy depth for what follows.
func TestNestingDepthNeverNegative(t *testing.T) {
	const n = 1000
	for name, prefix := range map[string]string{
		"chains":    strings.Repeat("!!!!!!!!\n", n),
		"closers":   strings.Repeat(")]}", n),
		"endifs":    "x = \"" + strings.Repeat("%{endif}", n) + "\"\n",
		"questions": strings.Repeat("a ? b : c\n", n),
	} {
		src := prefix + "y = " + strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1) + "\n"
		if err := NestingDepth([]byte(src), MaxNesting); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
