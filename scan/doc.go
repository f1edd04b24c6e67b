// Package scan reads an OpenTofu configuration, the root module and every
// module it calls, for what makes a plan more than a read, before the gate
// exempts the plan from a rule with exclude_dry_run. It follows the spec
// section "What a plan runs, and what the gate reads": a plan that declares
// one of these, or that the scan cannot read in full, is held as the real
// run it may be, named by address (module.network.data.external.lookup).
//
// # What is scanned
//
// The files are those OpenTofu v1.12 loads for a module (ConfigFiles,
// after internal/configs/parser_config_dir.go): *.tf, *.tf.json, *.tofu and
// *.tofu.json in the module's directory, override files included, where
// x.tofu shadows x.tf and x.tofu.json shadows x.tf.json; hidden and editor
// files are ignored and subdirectories are read only when a module call
// names them. Each file is read with gate.ReadConfigFile (a regular file,
// bounded in size, nesting and blocks) and parsed in the native or the JSON
// syntax; both share one reading through hcl.Body.PartialContent. A finding
// is made for:
//
//   - data and ephemeral blocks of type external, aws_lambda_invocation and
//     local_command, which act whenever they are read, including data
//     blocks nested in check blocks;
//   - data and ephemeral blocks of type http whose method is anything but
//     exactly "GET" or "HEAD" (absent or null is GET), whose method is not a
//     plain quoted string (a variable, a call, an interpolation, a
//     conditional: it counts as a write), or that have a request_body that
//     is not null;
//   - key_provider and method blocks of type external in terraform {
//     encryption { } }, and in TF_ENCRYPTION (Options.Encryption), which
//     OpenTofu reads as the body of an encryption block, JSON when it starts
//     with "{" (internal/encryption/config/config_load.go);
//   - an argument of a backend or key provider whose file can run a program
//     (fileArguments in fileargs.go, every spelling OpenTofu accepts, read
//     by the block's type: an AWS shared config or credentials file, a
//     kubeconfig, Google credentials, the kubernetes backend's exec), in a
//     data "terraform_remote_state" config, in a key_provider, and, for a
//     pull request (Options.PullRequest), in the root module's backend
//     block; docs/scan-file-arguments.md lists them, and a test checks the
//     list against OpenTofu's schemas;
//   - anything that cannot be read, which is left unread: a file that is
//     not a regular file, too large or too deep, that does not parse, or
//     that is a symlink leading outside Options.Root; a module directory that
//     does not exist, leads outside Options.Root (a symlink or "../" path
//     included), or lies in a .terraform directory that the manifest's tofu
//     get did not install; a module source that is not a plain string (it
//     is evaluated at init); a module that is not local and has no record in
//     Options.Manifest (it could not be downloaded); a module nested deeper
//     than MaxDepth, or one that calls a module containing it; modules and
//     files past MaxModules and MaxFiles.
//
// Local modules ("./" or "../") are read from the caller's directory, even
// when the caller was itself downloaded; any other module is read only from
// the directory Options.Manifest records for its key. No .terraform
// directory is ever read on its own account: a committed or leftover copy
// of a module is not the module the run executes.
//
// Module's Digest covers every configuration file read, by module key and
// name; PlanDigest computes it from a saved plan's configuration snapshot,
// which holds the same files, so the caller can tie the plan it runs to
// the modules it scanned.
//
// # What the scan does not prove
//
// Providers are trusted: a provider may do anything when it is configured
// or when it reads any data source, and only the kinds above are looked
// for; a data source of another type, or a provider function, is not a
// finding. The scan reads configuration as written: configuration that is
// transformed or generated before OpenTofu sees it (by a wrapper, a
// pre-processing step, or files written during the run) is not what was
// scanned, which the digest alone can catch. Override files are read like
// any file, not merged, except that an override's module source replaces
// the primary's, so a write overridden back into a read is still a finding.
// A local module or file symlinked outside Options.Root is left unread, not
// followed, and so is anything about it.
package scan
