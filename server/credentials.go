package server

import (
	"context"
	"encoding/json"
	"fmt"
	osexec "os/exec"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// credentialCommandTimeout bounds a command-source credential.
const credentialCommandTimeout = 60 * time.Second

// credentials resolves a template's credentials into environment entries
// (spec "How values reach the configuration"): env credentials as given, a
// token credential as SWITCHTENDER_TOKEN, a command-source credential by
// running its command now, for this run. Every value is added to the masker
// before any process prints. A failing command fails the run before any tool
// process starts; its error names the credential, never the output.
func (s *Server) credentials(ctx context.Context, t *config.Template, runID string, m *mask.Masker) (map[string]string, error) {
	env := map[string]string{}
	for _, name := range t.Credentials {
		c := s.config().Credentials[name]
		if c == nil {
			return nil, fmt.Errorf("credential %q of template %q is not configured", name, t.Name)
		}
		for k, v := range c.Env {
			m.Add(v)
			env[k] = v
		}
		if c.Token != "" {
			m.Add(c.Token)
			env["SWITCHTENDER_TOKEN"] = c.Token
		}
		if len(c.Command) > 0 {
			v, err := s.runCredentialCommand(ctx, c, runID)
			if err != nil {
				return nil, err
			}
			m.Add(v)
			env[c.EnvVar] = v
		}
	}
	return env, nil
}

// runCredentialCommand runs a command-source credential for run id, as a
// tool process is run (exec.Capture): in its own process group, sent SIGINT
// if the server dies, with the run's marker in its environment so a restart
// finds and stops it if it outlives the server, and stopped after
// credentialCommandTimeout. It gets the server's environment (a vault client
// needs its address and token file), never a run's. Its stderr is dropped:
// it may hold what it fetched; its exit status is reported.
func (s *Server) runCredentialCommand(ctx context.Context, c *config.Credential, id string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, credentialCommandTimeout)
	defer cancel()
	bin, err := osexec.LookPath(c.Command[0])
	if err != nil {
		return "", fmt.Errorf("credential %q: its command %q cannot be found (%v); fix the command, then launch again. Nothing ran", c.Name, c.Command[0], err)
	}
	env := append(append([]string{}, s.env...), runMarkerVar+"="+s.runMarker(id))
	out, res, err := exec.Capture(ctx, exec.Invocation{Binary: bin, Args: c.Command[1:], Env: env, Grace: s.config().Server.CancelGrace})
	defer clear(out)
	switch {
	case err != nil:
		return "", fmt.Errorf("credential %q: its command %q failed (%v); fix the command or its access, then launch again. Nothing ran", c.Name, c.Command[0], err)
	case res.ExitCode != 0:
		return "", fmt.Errorf("credential %q: its command %q failed (exit status %d); fix the command or its access, then launch again. Nothing ran", c.Name, c.Command[0], res.ExitCode)
	}
	v := strings.TrimRight(string(out), "\r\n")
	if v == "" {
		return "", fmt.Errorf("credential %q: its command %q printed nothing; nothing ran", c.Name, c.Command[0])
	}
	return v, nil
}

// runVars is a run's variables as they reach TF_VAR_: the plain ones and
// the sealed secret answers, opened now and added to the masker with every
// element of a list or map (secretForms). It returns the secret forms too.
func (s *Server) runVars(r store.Run, m *mask.Masker) (vars map[string]string, secrets []string, err error) {
	vars = map[string]string{}
	for k, v := range r.Vars {
		vars[k] = v
	}
	if len(r.SealedVars) == 0 {
		return vars, nil, nil
	}
	secret, err := openSealedMap(s.key, r.ID, r.SealedVars)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the run's sealed answers: %w", err)
	}
	for k, v := range secret {
		forms := secretForms(v)
		m.Add(forms...)
		secrets = append(secrets, forms...)
		vars[k] = v
	}
	return vars, secrets, nil
}

// openSealedMap opens a sealed JSON object of strings bound to run id.
func openSealedMap(key *seal.Key, id string, blob []byte) (map[string]string, error) {
	plain, _, err := seal.Open(key, id, blob)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	var m map[string]string
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, fmt.Errorf("reading sealed values: %w", err)
	}
	return m, nil
}

// sealMap seals a JSON object of strings to run id.
func sealMap(key *seal.Key, id string, m map[string]string) ([]byte, error) {
	plain, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding sealed values: %w", err)
	}
	defer clear(plain)
	return seal.Seal(key, id, plain)
}
