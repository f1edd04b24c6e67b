package runstep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
)

// Names of files in a run's private directory (DataDir/runs/ID, mode 0700).
const (
	PlanFileName = "plan.tfplan" // the saved plan, plaintext only while a tool reads it
	PlanJSONName = "plan.json"   // never written; listed so a stray copy is wiped at start
)

// EnvValue is the value env (KEY=VALUE entries, the last one winning)
// gives key, or "".
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
