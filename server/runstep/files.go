package runstep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Names of files in a run's private directory (DataDir/runs/ID, mode 0700).
const (
	PlanFileName = "plan.tfplan" // the saved plan, plaintext only while a tool reads it
	PlanJSONName = "plan.json"   // never written; listed so a stray copy is wiped at start
)

func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// RunMarkerVar is set in the environment of every process a run starts (and
// so inherited by what those start: provisioners, providers). Its value
// names the data directory and the run, so that a restart can find what a
// killed server left running.
const RunMarkerVar = "SWITCHTENDER_RUN"

// Marker is the value of RunMarkerVar in every process of run id started
// by the control node or worker whose data directory is dataDir.
func Marker(dataDir, id string) string { return dataDir + "#" + id }

// StopMarked stops every process whose environment holds RunMarkerVar with
// one of markers: SIGINT, then SIGKILL after grace. It returns how many it
// found (none where there is no /proc).
func StopMarked(markers []string, grace time.Duration) int {
	if len(markers) == 0 {
		return 0
	}
	want := map[string]bool{}
	for _, m := range markers {
		want[RunMarkerVar+"="+m] = true
	}
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			for _, kv := range bytes.Split(env, []byte{0}) {
				if want[string(kv)] {
					pids = append(pids, pid)
					break
				}
			}
		}
		return pids
	}
	found := find()
	for _, pid := range found {
		_ = syscall.Kill(pid, syscall.SIGINT)
	}
	deadline := time.Now().Add(grace)
	for left := found; len(left) > 0; left = find() {
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return len(found)
}

// MaskKeyFiles adds the contents of the key files at paths to m; a file
// that cannot be read (not created yet) adds nothing.
func MaskKeyFiles(m *mask.Masker, paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 1<<20 {
			continue
		}
		// Some keys read the same in another case (an age identity's
		// bech32): a configuration's lower() or upper() shows them too.
		m.Add(string(b), strings.ToLower(string(b)), strings.ToUpper(string(b)))
		clear(b)
	}
}

// PlanTooLarge is the refusal of a plan file over the relay's limit: a
// plan fails without proposing an apply; a drift check keeps no plan.
func PlanTooLarge(kind store.Kind, size int64) string {
	what := "the plan fails without proposing an apply, and nothing was applied"
	if kind == store.KindCheck {
		what = "this drift check keeps no plan, so a reconcile cannot be proposed from it"
	}
	return fmt.Sprintf("The saved plan is %.1f MiB (%d bytes), over the %d MiB a plan file may cross the relay; %s. Run it on a queue the control node executes, or split the configuration.",
		float64(size)/(1<<20), size, relay.PlanLimit>>20, what)
}

// LocalStatePath returns where the local backend keeps the working
// directory's state in the default workspace (terraform.tfstate, or the
// backend's "path" setting), or false when init configured another backend
// or a workspace is selected: then only `state pull` is sure.
func LocalStatePath(dir string) (string, bool) {
	var backend struct {
		Backend *struct {
			Type   string         `json:"type"`
			Config map[string]any `json:"config"`
		} `json:"backend"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".terraform", "terraform.tfstate")); err == nil {
		if json.Unmarshal(b, &backend) != nil {
			return "", false
		}
	}
	ws := "default"
	if b, err := os.ReadFile(filepath.Join(dir, ".terraform", "environment")); err == nil {
		ws = strings.TrimSpace(string(b))
	}
	be := backend.Backend
	if (be != nil && be.Type != "local") || (ws != "default" && ws != "") {
		// Another backend, or a workspace (whose directory workspace_dir may
		// move): only the tool knows for sure, so state pull reads it.
		return "", false
	}
	if be != nil {
		if p, ok := be.Config["path"].(string); ok && p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			return p, true
		}
	}
	return filepath.Join(dir, "terraform.tfstate"), true
}

// ChangedSince is the *Outcome refusing the process step when the
// configuration got in working directory command differs from want, the
// one the plan was made from; nil when they are the same.
func ChangedSince(want *scan.Identity, got scan.Identity, step, command string) error {
	diff := want.Diff(got)
	if len(diff) == 0 {
		return nil
	}
	return End(store.StatusFailed, -1, "Refused before %s: the configuration in %s is not the one the plan was made from: %s. Nothing more ran and nothing was applied; submit the run again to plan what the checkout holds now.", step, command, strings.Join(diff, "; "))
}

// DirIdentity is a directory's device and inode, "DEVICE:INODE", or "" where
// the platform does not say.
func DirIdentity(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", nil
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}
