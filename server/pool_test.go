package server

import (
	"strings"
	"testing"
)

// A template on a relay pool's queue is named at start (serve warns,
// `check` fails) and every launch of it is refused with a sentence: relay
// workers do not exist in this version, and nothing is silently accepted.
func TestPoolTemplateRefusedAtStartAndLaunch(t *testing.T) {
	h := newHarness(t, `
queue "eu" { pool = "eu" }
pool "eu" {
  delivery_key = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
}
template "remote" {
  project = "infra"
  command = "infra/network"
  queue   = "eu"
}
`)
	got := strings.Join(h.srv.Problems(), "\n")
	if !strings.Contains(got, `template remote`) || !strings.Contains(got, "relay workers are not available in this version") {
		t.Errorf("problems at start do not name the pool template:\n%s", got)
	}
	if _, errOut, code := h.ssh("alice", "launch", "remote"); code != exitRefused || !strings.Contains(errOut, "relay workers are not available") {
		t.Errorf("launch on a pool's queue: exit %d, %q", code, errOut)
	}
}
