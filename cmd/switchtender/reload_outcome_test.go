package main

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// `switchtender reload` reports the server's own outcome: when the server
// refuses the reload (here a stand-in serve, this process, answering
// SIGHUP through the outcome file as reloadOn does), reload exits non-zero
// with the server's reason, and the outcome of an earlier reload already
// in the file is not taken for this one. The break it guards: reload sent
// SIGHUP and exited 0 whatever the server did.
func TestReloadExitsNonZeroWhenTheServerRefuses(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  data_dir = \""+data+"\"\n}\n"), 0o600)
	os.WriteFile(filepath.Join(data, pidFileName), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	writeReloadOutcome(data, reloadOutcome{PID: os.Getpid(), Seq: 1, Digest: fileDigest(cfg), OK: true, Message: "an earlier reload"})

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		<-hup
		writeReloadOutcome(data, reloadOutcome{PID: os.Getpid(), Seq: 2, Digest: fileDigest(cfg), Message: "the reload was refused and the configuration in force stays: rule x does not compile"})
	}()
	var out bytes.Buffer
	err := cmdReload([]string{"--config", cfg}, &out)
	if err == nil || !strings.Contains(err.Error(), "refused the reload") || !strings.Contains(err.Error(), "rule x does not compile") {
		t.Fatalf("reload: %v\n%s", err, out.String())
	}
}
