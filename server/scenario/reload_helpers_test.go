package scenario

import (
	"os"
	"strings"

	"github.com/switchtender/switchtender/server/config"
)

// Changing a running control node's configuration file and reloading it.

// reloadWith appends extra to the harness's configuration file, loads it and
// reloads the server with it.
func (h *harness) reloadWith(extra string) {
	h.t.Helper()
	f, err := os.OpenFile(h.cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		h.t.Fatal(err)
	}
	f.Close()
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		h.t.Fatalf("loading the changed configuration: %v", err)
	}
	h.srv.Reload(cfg)
}

// reloadReplacing rewrites the configuration file with old replaced by
// new, then reloads the server with it.
func (h *harness) reloadReplacing(old, new string) {
	h.t.Helper()
	b, err := os.ReadFile(h.cfgPath)
	if err != nil || !strings.Contains(string(b), old) {
		h.t.Fatalf("the configuration lacks %q (%v)", old, err)
	}
	if err := os.WriteFile(h.cfgPath, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.reloadWith("")
}
