package scan

import (
	"slices"
)

// fileArgument is one argument of a backend or encryption key provider of
// the pinned OpenTofu that names a file on the machine the plan runs on (or,
// for the kubernetes backend's exec, a program), with what the scan makes
// of it. TestScanKnowsEveryFileArgumentOfOpenTofu reads OpenTofu's schemas
// from its Go source and fails when one names a file that is not listed
// here; docs/scan-file-arguments.md is this table.
type fileArgument struct {
	kind string // "backend" (also a terraform_remote_state's backend) or "key_provider"
	typ  string // the type OpenTofu registers: "s3", "aws_kms"
	name string // the argument, every spelling OpenTofu accepts listed on its own
	// runs says the file it names can run a program when OpenTofu reads
	// it (an AWS credential_process, a kubeconfig's exec plugin), which
	// makes it a finding; otherwise the file is only read as data.
	runs bool
	what string // what the file is, and what it can or cannot run
}

// Notes shared by several arguments.
const (
	awsCredentials = "an AWS shared config or credentials file: a profile's credential_process runs the program it names when the credentials are loaded"
	kubeconfig     = "a kubeconfig: a user's exec credential plugin runs the program it names when the backend first talks to the cluster"
	gcpCredentials = "Google credentials JSON, a file or its contents: an external_account credential's executable credential_source runs its command (when GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 is in the environment)"
	awsCABundle    = "PEM certificates the AWS client trusts; read as data"
	awsTokenFile   = "a web identity token, read as data and sent to AWS STS"
	azureDataFile  = "a secret (client ID, client secret, OIDC token or PKCS#12 certificate) read as data and sent to Azure"
)

// fileArguments is every argument of OpenTofu v1.12's backends and key
// providers that names a file, as the scan classifies it.
var fileArguments = []fileArgument{
	{"backend", "azurerm", "client_certificate_path", false, azureDataFile},
	{"backend", "azurerm", "client_id_file_path", false, azureDataFile},
	{"backend", "azurerm", "client_secret_file_path", false, azureDataFile},
	{"backend", "azurerm", "oidc_token_file_path", false, azureDataFile},
	{"backend", "consul", "ca_file", false, "a PEM certificate authority; read as data"},
	{"backend", "consul", "cert_file", false, "a PEM client certificate; read as data"},
	{"backend", "consul", "key_file", false, "a PEM private key; read as data"},
	{"backend", "consul", "path", false, "a key in Consul's key/value store, not a file"},
	{"backend", "gcs", "credentials", true, gcpCredentials},
	{"backend", "kubernetes", "config_path", true, kubeconfig},
	{"backend", "kubernetes", "config_paths", true, kubeconfig + " (a list of them)"},
	{"backend", "kubernetes", "exec", true, "not a file: an exec credential plugin, which runs the command it names"},
	{"backend", "kubernetes", "load_config_file", false, "a switch, names no file"},
	{"backend", "local", "path", false, "a state file, read (and for the root backend written) as data"},
	{"backend", "local", "workspace_dir", false, "a directory of state files, read as data"},
	{"backend", "oss", "shared_credentials_file", false, "an Alibaba Cloud CLI config.json, read for a profile's keys, STS token or role (modes AK, StsToken, RamRoleArn, EcsRamRole); it runs nothing"},
	{"backend", "s3", "custom_ca_bundle", false, awsCABundle},
	{"backend", "s3", "key", false, "the state's object key in the bucket, not a file"},
	{"backend", "s3", "shared_config_files", true, awsCredentials},
	{"backend", "s3", "shared_credentials_file", true, awsCredentials + " (the singular spelling OpenTofu deprecates but still accepts)"},
	{"backend", "s3", "shared_credentials_files", true, awsCredentials},
	{"backend", "s3", "web_identity_token_file", false, awsTokenFile + " (in assume_role_with_web_identity)"},
	{"key_provider", "aws_kms", "custom_ca_bundle", false, awsCABundle},
	{"key_provider", "aws_kms", "shared_config_files", true, awsCredentials},
	{"key_provider", "aws_kms", "shared_credentials_files", true, awsCredentials},
	{"key_provider", "aws_kms", "web_identity_token_file", false, awsTokenFile + " (in assume_role_with_web_identity)"},
	{"key_provider", "azure_vault", "client_certificate_path", false, azureDataFile},
	{"key_provider", "azure_vault", "client_id_file_path", false, azureDataFile},
	{"key_provider", "azure_vault", "client_secret_file_path", false, azureDataFile},
	{"key_provider", "azure_vault", "oidc_token_file_path", false, azureDataFile},
	{"key_provider", "gcp_kms", "credentials", true, gcpCredentials},
	{"key_provider", "openbao", "transit_engine_path", false, "a path on the OpenBao server, not a file"},
}

// knownTypes are the backend and key provider types OpenTofu v1.12
// registers (internal/backend/init/init.go, which also reads "_local" as
// local, and internal/encryption/default_registry.go); the schema test
// checks them against its source.
var knownTypes = map[string][]string{
	"backend":      {"azurerm", "cloud", "consul", "cos", "gcs", "http", "inmem", "kubernetes", "local", "oss", "pg", "remote", "s3"},
	"key_provider": {"aws_kms", "azure_vault", "external", "gcp_kms", "openbao", "pbkdf2"},
}

// credentialArgs returns the arguments of fileArguments that run a
// program for a backend or key provider (kind) of type typ; for a type
// OpenTofu does not register, or one the scan cannot read (typ ""), every
// such argument of any type of that kind, since OpenTofu will reject
// whatever that type does not have anyway.
func credentialArgs(kind, typ string) []string {
	if kind == "backend" && typ == "_local" {
		typ = "local"
	}
	known := slices.Contains(knownTypes[kind], typ)
	var out []string
	for _, a := range fileArguments {
		if a.kind == kind && a.runs && (!known || a.typ == typ) && !slices.Contains(out, a.name) {
			out = append(out, a.name)
		}
	}
	slices.Sort(out)
	return out
}

// runsWhy is what the file the argument name of a backend or key provider
// (kind) of type typ names can run, for a finding's reason.
func runsWhy(kind, typ, name string) string {
	for _, a := range fileArguments {
		if a.kind == kind && a.runs && a.name == name && (a.typ == typ || !slices.Contains(knownTypes[kind], typ)) {
			return a.what
		}
	}
	return "a file that can run a program"
}
