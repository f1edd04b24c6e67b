package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// Canaries of the secrets test (testkit's): each secret a run meets.
const (
	canaryDB    = testkit.CanaryDB
	canaryNote  = testkit.CanaryNote
	canaryCloud = testkit.CanaryCloud
	canaryVault = testkit.CanaryVault
)

func canaryDerived() string { return testkit.CanaryDerived() }

func forms(secret string) []string { return testkit.Forms(secret) }

// leaks reports every canary form found in b, naming where.
func leaks(where string, b []byte, canaries []string) []string {
	return formsOf(canaries).find(where, b)
}

// canaryForms is every form of a set of canaries, computed once.
type canaryForms []struct{ form, of string }

func formsOf(canaries []string) canaryForms {
	var cf canaryForms
	for _, c := range canaries {
		for _, f := range forms(c) {
			cf = append(cf, struct{ form, of string }{f, c})
		}
	}
	return cf
}

func (cf canaryForms) find(where string, b []byte) []string {
	var found []string
	for _, f := range cf {
		if bytes.Contains(b, []byte(f.form)) {
			found = append(found, fmt.Sprintf("%s holds %q (a form of %q)", where, f.form, f.of))
		}
	}
	return found
}

// cmdlineWatch samples /proc/*/cmdline every few milliseconds, recording
// any canary form an argument list holds and whether it saw tofu at all.
type cmdlineWatch struct {
	canaries canaryForms
	stop     chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	found   []string
	tofu    int // samples in which a tofu process was seen
	samples int
}

func watchCmdlines(canaries []string) *cmdlineWatch {
	w := &cmdlineWatch{canaries: formsOf(canaries), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *cmdlineWatch) loop() {
	defer close(w.done)
	seen := map[string]bool{}
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		sawTofu := false
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil || len(b) == 0 {
				continue
			}
			argv0, _, _ := bytes.Cut(b, []byte{0})
			if filepath.Base(string(argv0)) == "tofu" {
				sawTofu = true
			}
			for _, l := range w.canaries.find(p+" "+strings.ReplaceAll(string(b), "\x00", " "), b) {
				if !seen[l] {
					seen[l] = true
					w.mu.Lock()
					w.found = append(w.found, l)
					w.mu.Unlock()
				}
			}
		}
		w.mu.Lock()
		w.samples++
		if sawTofu {
			w.tofu++
		}
		w.mu.Unlock()
		time.Sleep(3 * time.Millisecond)
	}
}

// finish stops sampling and returns what it found.
func (w *cmdlineWatch) finish() (found []string, tofuSamples, samples int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.found, w.tofu, w.samples
}

// follow runs `log ID --follow` as user over SSH in the background; the
// returned function waits for it and returns what the follower received.
func (h *harness) follow(user, id string) func() string {
	ch := make(chan string, 1)
	go func() {
		client, err := dialAs(h, user)
		if err != nil {
			ch <- "follow: " + err.Error()
			return
		}
		defer client.Close()
		sess, err := client.NewSession()
		if err != nil {
			ch <- "follow: " + err.Error()
			return
		}
		defer sess.Close()
		out, _ := sess.Output(shellJoin([]string{"log", id, "--follow"}))
		ch <- string(out)
	}()
	return func() string {
		select {
		case s := <-ch:
			return s
		case <-time.After(3 * time.Minute):
			return "follow: timed out"
		}
	}
}

// With real OpenTofu, a dry run and a gated apply of a configuration full of
// secrets (a sensitive variable, a survey field marked sensitive, an env and
// a command-source credential, a value only the plan marks sensitive,
// sensitive outputs, a provisioner that prints them all in several encodings)
// leave no canary in the stored log, in what SSH followers received, in
// show/runs JSON, in the bbolt file, in any file of the data directory, or in
// any process's argument list while tofu runs.
func TestSecretsStayOutOfEverything(t *testing.T) {
	secrets := t.TempDir()
	vaultFile := filepath.Join(secrets, "vault-token")
	if err := os.WriteFile(vaultFile, []byte(canaryVault+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, `
credential "cloud" {
  env = { CLOUD_KEY = "`+canaryCloud+`" }
}
credential "vault" {
  command = ["cat", "`+vaultFile+`"]
  env_var = "VAULT_TOKEN"
}
template "secret" {
  project     = "infra"
  command     = "infra/secret"
  credentials = ["cloud", "vault"]
  survey "db_password" {
    type = "string"
  }
  survey "api_note" {
    type      = "string"
    sensitive = true
  }
  survey "generation" {
    type    = "string"
    default = "1"
  }
}
rule "secret" {
  templates        = ["secret"]
  kinds            = ["apply"]
  require_approval = true
}
`)
	canaries := []string{canaryDB, canaryNote, canaryCloud, canaryVault, canaryDerived()}
	// The sampler must see what it looks for: a process of our own carries
	// a sentinel in its argument list, and only the sentinel may be found.
	const sentinel = "argv-sentinel-7d1e05b3"
	watch := watchCmdlines(append([]string{sentinel}, canaries...))
	if err := osexec.Command("sh", "-c", "sleep 0.3", sentinel).Run(); err != nil {
		t.Fatal(err)
	}
	answers := []string{"--var", "db_password=" + canaryDB, "--var", "api_note=" + canaryNote}

	// Run 1: a dry run. Run 2: a gated apply, held, then approved by bob.
	dry := h.mustSSH("alice", append([]string{"launch", "secret", "--dry-run", "--wait"}, answers...)...)
	if !strings.Contains(dry, "run 1: succeeded") || !strings.Contains(dry, "Plan: 4 to add") {
		t.Fatalf("dry run:\n%s", dry)
	}
	held := h.mustSSH("alice", append([]string{"launch", "secret", "--wait"}, answers...)...)
	if !strings.Contains(held, "run 2: awaiting_approval") {
		t.Fatalf("gated apply not held:\n%s", held)
	}
	p := h.show("bob", "2").Proposal
	h.mustSSH("bob", "approve", "2", "--digest", p.Digest)
	followed := h.follow("bob", "2")
	h.waitStatus("2", StatusSucceeded)
	live := followed()
	found, tofuSamples, samples := watch.finish()
	t.Logf("/proc sampled %d times, a tofu process seen in %d", samples, tofuSamples)
	if tofuSamples == 0 {
		t.Errorf("the /proc sampler never saw a tofu process in %d samples; the argv check proved nothing", samples)
	}
	sawSentinel := false
	for _, l := range found {
		if strings.Contains(l, sentinel) && !strings.Contains(l, "canary") {
			sawSentinel = true
			continue
		}
		t.Errorf("a process's argument list: %s", l)
	}
	if !sawSentinel {
		t.Errorf("the /proc sampler missed the sentinel process's argument list; the argv check proved nothing")
	}

	// The secrets did reach tofu (the state holds them), and the provisioner
	// printed every one of them, masked.
	state, err := os.ReadFile(filepath.Join(h.project, "infra/secret/terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range canaries[:2] {
		if !strings.Contains(string(state), strings.Trim(string(must(json.Marshal(c))), `"`)) {
			t.Errorf("the state lacks %q: the secret never reached the configuration", c)
		}
	}
	if !strings.Contains(string(state), canaryDerived()) {
		t.Errorf("the state lacks the derived value")
	}
	stored := h.mustSSH("bob", "log", "2")
	for _, want := range []string{
		"cloud=*** vault=***",
		"cloud64=***",
		`db=*** db64=*** dbjson="***" dburl=***`,
		"derived=*** note=***",
		"db = <sensitive>",
		"Apply complete! Resources: 4 added",
	} {
		if !strings.Contains(stored, want) {
			t.Errorf("the stored log of the gated apply lacks %q:\n%s", want, stored)
		}
	}
	if !strings.Contains(dry, `input  = "***"`) {
		t.Errorf("the dry run's plan does not show the survey-sensitive answer masked:\n%s", dry)
	}

	// show RUN names the secret answers without their values.
	shown := h.mustSSH("bob", "show", "2")
	for _, want := range []string{"var api_note = (sensitive)", "var db_password = (sensitive)", "var generation = 1"} {
		if !strings.Contains(shown, want) {
			t.Errorf("show 2 lacks %q:\n%s", want, shown)
		}
	}

	sinks := map[string]string{
		"the dry run's launch --wait output":     dry,
		"the gated apply's launch --wait output": held,
		"a follower of the apply (log --follow)": live,
		"log 1":                                  h.mustSSH("bob", "log", "1"),
		"log 2":                                  stored,
		"show 1":                                 h.mustSSH("bob", "show", "1"),
		"show 2":                                 shown,
		"show 1 --json":                          h.mustSSH("bob", "show", "1", "--json"),
		"show 2 --json":                          h.mustSSH("bob", "show", "2", "--json"),
		"runs --json":                            h.mustSSH("bob", "runs", "--json"),
		"templates --json":                       h.mustSSH("bob", "templates", "--json"),
	}
	if !strings.Contains(live, "Apply complete!") {
		t.Errorf("the follower did not receive the apply:\n%s", live)
	}
	for where, text := range sinks {
		for _, l := range leaks(where, []byte(text), canaries) {
			t.Errorf("%s", l)
		}
	}

	// At rest: the bbolt file and every other file of the data directory,
	// read with the server stopped so the store is flushed.
	h.stop()
	files := h.dataFiles()
	sawDB := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "switchtender.db" {
			sawDB = true
		}
		for _, l := range leaks(f, b, canaries) {
			t.Errorf("%s", l)
		}
		if filepath.Base(f) == planFileName || filepath.Base(f) == planJSONName {
			t.Errorf("plaintext plan left behind: %s", f)
		}
		if fi, err := os.Stat(f); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: readable or writable by others than the owner", f, fi.Mode().Perm())
		}
	}
	if !sawDB {
		t.Errorf("no switchtender.db among the data files %v", files)
	}

	// The data directory and each run's private directory are the owner's
	// alone.
	dirs, _ := filepath.Glob(filepath.Join(h.dir, "data", "runs", "*"))
	dirs = append(dirs, filepath.Join(h.dir, "data"), filepath.Join(h.dir, "data", "runs"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.IsDir() && fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
	if len(dirs) < 4 {
		t.Errorf("no private run directories under %s: %v", filepath.Join(h.dir, "data", "runs"), dirs)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// tamperBlobs stops the server, changes sealed plans in the store with fn,
// and starts it again.
func (h *harness) tamperBlobs(fn func(db *store.DB)) {
	h.t.Helper()
	h.stop()
	db, err := store.Open(filepath.Join(h.dir, "data", "switchtender.db"))
	if err != nil {
		h.t.Fatal(err)
	}
	fn(db)
	if err := db.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.start()
}

// A sealed plan whose bytes were altered, or one swapped for another run's,
// is refused when its apply is approved: approve says it cannot be
// approved and why, and the run stays held. A run released all the same
// (its approval written to the store behind the server's back) is refused
// at its apply: the run fails with a message that says so, tofu apply never
// starts, and the state file is byte for byte what it was.
func TestTamperedOrSwappedSealedPlanRefused(t *testing.T) {
	h := newHarness(t, dataTemplates+`
rule "destroys" {
  templates   = ["data"]
  max_destroy = 0
}
`)
	if out := h.mustSSH("alice", "launch", "data", "--wait"); !strings.Contains(out, "run 1: succeeded") {
		t.Fatalf("first apply:\n%s", out)
	}
	// Three held applies with three different plans over the same state.
	for _, v := range []string{"instances=1", "instances=2", "generation=2"} {
		h.mustSSH("carol", "launch", "data", "--var", v)
	}
	digests := map[string]string{}
	for _, id := range []string{"2", "3", "4"} {
		h.waitStatus(id, StatusAwaitingApproval)
		digests[id] = h.show("bob", id).Proposal.Digest
	}
	if digests["2"] == digests["3"] || digests["3"] == digests["4"] || digests["2"] == digests["4"] {
		t.Fatalf("the held plans share a digest: %v", digests)
	}
	statePath := filepath.Join(h.project, "infra/data/terraform.tfstate")
	before, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}

	h.tamperBlobs(func(db *store.DB) {
		// Run 2: one byte of its sealed payload flipped.
		a, err := db.GetBlob(blobPlan, "2")
		if err != nil {
			t.Fatal(err)
		}
		a[len(a)-40] ^= 0x01
		if err := db.PutBlob(blobPlan, "2", a); err != nil {
			t.Fatal(err)
		}
		// Runs 3 and 4: each holds the other's intact sealed plan.
		b, err := db.GetBlob(blobPlan, "3")
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.GetBlob(blobPlan, "4")
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PutBlob(blobPlan, "3", c); err != nil {
			t.Fatal(err)
		}
		if err := db.PutBlob(blobPlan, "4", b); err != nil {
			t.Fatal(err)
		}
	})

	for _, id := range []string{"2", "3", "4"} {
		_, errOut, code := h.ssh("bob", "approve", id, "--digest", digests[id])
		if code == 0 || !strings.Contains(errOut, "cannot be approved: the sealing key cannot open its held plan") {
			t.Errorf("approving run %s with a tampered sealed plan: exit %d %s", id, code, errOut)
		}
		if v := h.show("bob", id); v.Status != StatusAwaitingApproval || len(v.Approvals) != 0 {
			t.Errorf("run %s after the refused approve: %s with %d approvals", id, v.Status, len(v.Approvals))
		}
	}
	h.tamperBlobs(func(db *store.DB) {
		for _, id := range []string{"2", "3", "4"} {
			_, err := db.UpdateRun(id, func(r *store.Run) error {
				r.Approvals = append(r.Approvals, store.Approval{By: "bob", Digest: digests[id], Stage: StagePlan, Decision: DecisionApprove, At: time.Now()})
				r.Status, r.Phase = StatusQueued, phaseApply
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, id := range []string{"2", "3", "4"} {
		h.waitStatus(id, StatusFailed, StatusSucceeded, StatusStale)
		r, _ := h.srv.db.GetRun(id)
		if r.Status != StatusFailed || !strings.Contains(r.Message, "Refused to apply") || !strings.Contains(r.Message, "sealed plan") || !strings.Contains(r.Message, "nothing was applied") {
			t.Errorf("run %s after approval: %s: %q", id, r.Status, r.Message)
		}
		t.Logf("run %s: %s", id, r.Message)
		log := h.mustSSH("bob", "log", id)
		if strings.Contains(log, "$ tofu apply") || strings.Contains(log, "$ tofu show") {
			t.Errorf("run %s: a tool ran on a refused plan:\n%s", id, log)
		}
		after, err := os.ReadFile(statePath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("run %s: the state changed although its sealed plan was refused", id)
		}
		// The run is marked failed just before its sealed plan is dropped.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := h.srv.db.GetBlob(blobPlan, id); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("run %s: the refused sealed plan is still stored", id)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, f := range h.dataFiles() {
		if filepath.Base(f) == planFileName {
			t.Errorf("plaintext plan left behind: %s", f)
		}
	}
	if n := h.stateCount(); n != 3 {
		t.Errorf("state holds %d servers, want the 3 of run 1", n)
	}
}

// Promise (findings named by address, and the masking of credentials): a
// credential's value never shows in show, show --json or the audit trail.
// Once, a TF_ENCRYPTION credential the scan could not parse became a finding
// quoting the parser's message, passphrase included, for whoever could read
// the run.
func TestAnUnparsableEncryptionCredentialStaysOutOfTheFindings(t *testing.T) {
	const secret = "TroubadorHorseBatteryStaple"
	h := scanHarness(t, `
credential "enc" {
  env = { TF_ENCRYPTION = "{\"key_provider\": {\"pbkdf2\": {\"k\": {\"passphrase\": `+secret+`}}}}" }
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`)
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	show := h.mustSSH("carol", "show", v.ID)
	js := h.mustSSH("carol", "show", v.ID, "--json")
	audit := h.mustSSH("bob", "audit", "--json")
	t.Logf("%s: %s\n%s", v.Status, v.Message, show)
	for what, text := range map[string]string{"show": show, "show --json": js, "audit": audit, "message": v.Message} {
		if strings.Contains(text, secret) {
			t.Fatalf("the TF_ENCRYPTION passphrase leaks into %s (%s):\n%s", what, v.Status, text)
		}
	}
}

// Promise (docs/secrets.md: the masker replaces "every secret answer ...
// each also as OpenTofu renders it"): a survey answer marked sensitive never
// shows in show, show --json, the audit trail or the log. Once, a sensitive
// answer used as a module source showed in the log through tofu get's cleaned
// module path, which the masker did not know.
func TestASensitiveModuleSourceStaysOutOfTheGetLog(t *testing.T) {
	for _, c := range []struct {
		name, decl string
	}{
		{"plain", "variable \"src\" {\n  type = string\n}\n"},
		{"declared sensitive", "variable \"src\" {\n  type      = string\n  sensitive = true\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := scanHarness(t, `
template "secsrc" {
  project = "infra"
  command = "infra/secsrc"
  survey "src" {
    type      = "string"
    sensitive = true
  }
}
`)
			const secret = "hunter2-module-XYZZY"
			dir := filepath.Join(h.project, "infra/secsrc")
			os.MkdirAll(filepath.Join(dir, secret), 0o755)
			os.WriteFile(filepath.Join(dir, secret, "main.tf"), []byte("resource \"terraform_data\" \"m\" {}\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "main.tf"), []byte(c.decl+"\nmodule \"m\" {\n  source = var.src\n}\n"), 0o644)
			v := h.launchWait("alice", "secsrc", "--dry-run", "--var", "src=./"+secret)
			for what, text := range map[string]string{
				"show":      h.mustSSH("bob", "show", v.ID),
				"show json": h.mustSSH("bob", "show", v.ID, "--json"),
				"audit":     h.mustSSH("bob", "audit", "--json"),
				"log":       h.mustSSH("bob", "log", v.ID),
			} {
				if strings.Contains(text, secret) {
					t.Errorf("the sensitive answer shows in %s (%s):\n%s", what, v.Status, text)
				}
			}
		})
	}
}
