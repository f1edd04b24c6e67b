package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	bind := rememberedKey(project)
	known, err := s.rememberedLocked(project)
	if err != nil {
		return err
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
	return s.db.PutBlob(blobAnswers, bind, sealed)
}

// rememberedKey is the key (and sealing binding) of a project's remembered
// secret answers.
func rememberedKey(project string) string { return "project:" + project }

// rememberedSecrets is every secret answer runs of project were given, as
// remembered (the newest maxRememberedSecrets); none when no run was given
// one. An error says the remembered answers cannot be read or opened.
func (s *Server) rememberedSecrets(project string) ([]string, error) {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	return s.rememberedLocked(project)
}

// rememberedLocked is rememberedSecrets with s.secretsMu held.
func (s *Server) rememberedLocked(project string) ([]string, error) {
	key := rememberedKey(project)
	blob, err := s.db.GetBlob(blobAnswers, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading earlier secret answers: %w", err)
	}
	plain, _, err := seal.Open(s.key, key, blob)
	if err != nil {
		return nil, fmt.Errorf("opening earlier secret answers: %w", err)
	}
	defer clear(plain)
	var known []string
	if err := json.Unmarshal(plain, &known); err != nil {
		return nil, fmt.Errorf("reading earlier secret answers: %w", err)
	}
	return known, nil
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
