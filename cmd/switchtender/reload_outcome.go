package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// reloadOutcomeName is the file in the data directory where serve writes
// the outcome of each reload it was signalled for, for `switchtender
// reload` to read (a signal carries no answer).
const reloadOutcomeName = "switchtender.reload"

// reloadOutcomeWait bounds how long `switchtender reload` waits for it.
const reloadOutcomeWait = 60 * time.Second

// reloadOutcome is one reload's result: which serve process and which of
// its reloads (PID, Seq), the sha256 of the file it read, whether the
// configuration was replaced, and the sentence saying so or why not.
type reloadOutcome struct {
	PID     int    `json:"pid"`
	Seq     int    `json:"seq"`
	Digest  string `json:"config_sha256"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// fileDigest is the hex sha256 of the file at path, "" if it cannot be read.
func fileDigest(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeReloadOutcome replaces the outcome file in dataDir (mode 0600)
// whole, by a rename, so a reader never sees half of one.
func writeReloadOutcome(dataDir string, out reloadOutcome) error {
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, reloadOutcomeName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dataDir, reloadOutcomeName))
}

// readReloadOutcome reads the outcome file in dataDir.
func readReloadOutcome(dataDir string) (reloadOutcome, error) {
	var out reloadOutcome
	b, err := os.ReadFile(filepath.Join(dataDir, reloadOutcomeName))
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, &out)
}

// awaitReloadOutcome waits for process pid to write an outcome newer than
// before for the file whose digest is digest (an outcome for another
// version of the file answers an earlier signal), for reloadOutcomeWait
// at most.
func awaitReloadOutcome(dataDir string, pid int, before reloadOutcome, digest string) (reloadOutcome, error) {
	deadline := time.Now().Add(reloadOutcomeWait)
	for {
		out, err := readReloadOutcome(dataDir)
		newer := err == nil && out.PID == pid && (before.PID != pid || out.Seq > before.Seq)
		if newer && out.Digest == digest {
			return out, nil
		}
		if time.Now().After(deadline) {
			if errors.Is(err, os.ErrNotExist) || !newer {
				return out, fmt.Errorf("it wrote no outcome within %s (%s in the data directory): its operator log says whether the reload took", reloadOutcomeWait, reloadOutcomeName)
			}
			return out, fmt.Errorf("the reload it did read another version of the file (it changed while reloading); run reload again")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
