package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// What a run's masker knows before any tool process of the run prints
// (DESIGN invariant 3), besides credentials: this run's secret answers with
// every string element of a complex one; every secret answer an earlier run
// of the same working directory was given (a rotated password shows up as
// the "before" side of the next diff); and every value the current state
// marks sensitive (a value known before planning is printed by the plan).

// blobAnswers is the store's kind for a project's earlier secret answers,
// sealed with the server key, keyed by the project: working directories of
// one checkout may share a state (a backend path, a remote state), and a
// value remembered too widely is only masked where it was not needed.
const blobAnswers = "answers"

// maxRememberedSecrets bounds a working directory's remembered secrets; the
// oldest go first.
const maxRememberedSecrets = 512

// secretForms returns what the masker must know of one secret value as it
// reaches TF_VAR_: the value, and for a list or map every element, with the
// template escapes EncodeVar added ($${, %%{) undone, since tofu prints the
// value it reads.
func secretForms(encoded string) []string {
	out := gate.ValueStrings(encoded)
	unescaped := strings.NewReplacer("$${", "${", "%%{", "%{").Replace(encoded)
	if unescaped != encoded {
		out = append(out, gate.ValueStrings(unescaped)...)
	}
	return out
}

// rememberSecrets adds the secrets earlier runs of the project were given
// to m, then remembers this run's (values) for the runs after it, sealed.
// Runs of one project may execute at once, so the read-modify-write holds
// the server's lock for remembered secrets.
func (s *Server) rememberSecrets(project string, values []string, m *mask.Masker) error {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	dir := "project:" + project
	bind := dir
	var known []string
	blob, err := s.db.GetBlob(blobAnswers, dir)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return fmt.Errorf("reading earlier secret answers: %w", err)
	default:
		plain, _, err := seal.Open(s.key, bind, blob)
		if err != nil {
			return fmt.Errorf("opening earlier secret answers: %w", err)
		}
		err = json.Unmarshal(plain, &known)
		clear(plain)
		if err != nil {
			return fmt.Errorf("reading earlier secret answers: %w", err)
		}
	}
	m.Add(known...)
	if len(values) == 0 {
		return nil
	}
	merged := mergeSecrets(known, values)
	plain, err := json.Marshal(merged)
	if err != nil {
		return fmt.Errorf("encoding secret answers: %w", err)
	}
	sealed, err := seal.Seal(s.key, bind, plain)
	clear(plain)
	if err != nil {
		return fmt.Errorf("sealing secret answers: %w", err)
	}
	return s.db.PutBlob(blobAnswers, dir, sealed)
}

// mergeSecrets appends the new values not yet known, keeping the newest
// maxRememberedSecrets.
func mergeSecrets(known, values []string) []string {
	seen := map[string]bool{}
	for _, k := range known {
		seen[k] = true
	}
	out := append([]string{}, known...)
	for _, v := range values {
		if len(v) >= mask.MinLen && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) > maxRememberedSecrets {
		out = out[len(out)-maxRememberedSecrets:]
	}
	return out
}

// stateSecretsStep adds the values the working directory's current state
// marks sensitive to the masker before plan or apply prints a diff. A local
// state is read from its file (cheap, and exactly what tofu reads); any
// other backend through `state pull`, never logged. A state that cannot be
// read fails the run: unmasked values could reach the log.
func stateSecretsStep(ctx context.Context, x *execution) error {
	state, err := x.readState(ctx)
	defer clear(state)
	if err != nil {
		return err
	}
	values, err := gate.StateSensitiveValues(state)
	if err != nil {
		return fmt.Errorf("%v; nothing ran past init, since the values the state marks sensitive could not be masked", err)
	}
	x.masker.Add(values...)
	return nil
}

// readState reads the working directory's current state document.
func (x *execution) readState(ctx context.Context) ([]byte, error) {
	if path, ok := localStatePath(x.dir); ok {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the local state %s: %w", path, err)
		}
		return b, nil
	}
	return x.capture(ctx, "state pull", exec.StatePullArgs())
}

// localStatePath returns where the local backend keeps the working
// directory's state in the default workspace (terraform.tfstate, or the
// backend's "path" setting), or false when init configured another backend
// or a workspace is selected: then only `state pull` is sure.
func localStatePath(dir string) (string, bool) {
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
