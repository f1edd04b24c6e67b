package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The operator log's flags: json writes one JSON object per line at the
// level asked for; a format or level not offered is refused by name.
func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	l, err := newLogger(&buf, "json", "warn")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown", "run", "7")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "shown" || rec["run"] != "7" {
		t.Fatalf("json log %q: %v", buf.String(), err)
	}
	for _, tc := range [][2]string{{"xml", "info"}, {"json", "loud"}} {
		if _, err := newLogger(&buf, tc[0], tc[1]); err == nil || !strings.Contains(err.Error(), "give") {
			t.Errorf("newLogger(%q, %q) = %v, want a refusal naming the choices", tc[0], tc[1], err)
		}
	}
}
