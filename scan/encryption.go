package scan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/gate"
)

// envFile is the File of findings about TF_ENCRYPTION.
const envFile = "TF_ENCRYPTION"

// encryptionEnvSchema is the whole of an encryption block's body, which
// OpenTofu decodes strictly (gohcl.DecodeBody into EncryptionConfig in
// internal/encryption/config/config.go): anything else is an error there,
// and so cannot be read here.
var encryptionEnvSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "key_provider", LabelNames: []string{"type", "name"}},
	{Type: "method", LabelNames: []string{"type", "name"}},
	{Type: "state"},
	{Type: "plan"},
	{Type: "remote_state_data_sources"},
}}

// encryptionEnv reads TF_ENCRYPTION as OpenTofu does
// (EncryptionFromModule in internal/command/meta_encryption.go and
// LoadConfigFromString in internal/encryption/config/config_load.go): the
// value with surrounding space trimmed is the body of an encryption block,
// in JSON when it starts with "{" and in the native syntax otherwise. Its
// external key providers and methods, and a value it cannot read, are
// findings with File "TF_ENCRYPTION".
func (s *scanner) encryptionEnv(env string) {
	env = strings.TrimSpace(env)
	if env == "" {
		return
	}
	file, line, reason := readEncryptionEnv(env)
	if reason != "" {
		s.find("", envFile, line, reason)
		return
	}
	s.encryptionBlocks(nil, file, envFile)
}

// readEncryptionEnv parses a trimmed, non-empty TF_ENCRYPTION value and
// returns its key_provider and method blocks, or the line and reason it
// cannot be read.
func readEncryptionEnv(env string) (hcl.Blocks, int, string) {
	if len(env) > gate.MaxConfigFileSize {
		return nil, 0, fmt.Sprintf("TF_ENCRYPTION is over %d bytes and could not be read", gate.MaxConfigFileSize)
	}
	src := []byte(env)
	if err := gate.NestingDepth(src, gate.MaxNesting); err != nil {
		return nil, 0, fmt.Sprintf("TF_ENCRYPTION could not be read: %v", err)
	}
	f, diags := parseConfig(src, envFile, env[0] == '{')
	if diags.HasErrors() {
		return nil, diagLine(diags), fmt.Sprintf("TF_ENCRYPTION does not parse (%s); its value may hold a passphrase, so it is not quoted", diagSummaries(diags))
	}
	content, diags := f.Body.Content(encryptionEnvSchema)
	if diags.HasErrors() {
		return nil, diagLine(diags), fmt.Sprintf("TF_ENCRYPTION could not be read (%s); its value may hold a passphrase, so it is not quoted", diagSummaries(diags))
	}
	var out hcl.Blocks
	for _, b := range content.Blocks {
		if b.Type == "key_provider" || b.Type == "method" {
			out = append(out, b)
		}
	}
	return out, 0, ""
}

// diagSummaries joins the summaries of the error diagnostics, leaving out
// their details and subjects, which may quote the value read.
func diagSummaries(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags.Errs() {
		var de *hcl.Diagnostic
		if errors.As(d, &de) {
			parts = append(parts, de.Summary)
		}
	}
	return strings.Join(parts, "; ")
}
