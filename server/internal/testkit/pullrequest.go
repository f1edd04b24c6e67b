package testkit

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// H1Hash is OpenTofu's "h1:" package hash of a provider directory
// (golang.org/x/mod/sumdb/dirhash.HashDir(dir, "", Hash1)).
func H1Hash(t testing.TB, dir string) string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(b), f)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// WriteFakeProvider writes, under base (a .terraform/providers directory or
// a terraform.d/plugins mirror), a "hashicorp/null" 3.2.2 provider that is a
// shell script touching marker, and returns its h1 hash.
func WriteFakeProvider(t testing.TB, pkgDir, marker string) string {
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\nexit 1\n", marker)
	if err := os.WriteFile(filepath.Join(pkgDir, "terraform-provider-null_v3.2.2_x5"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return H1Hash(t, pkgDir)
}

// NullProviderConfig requires hashicorp/null 3.2.2 and declares one of
// its resources.
const NullProviderConfig = `terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "3.2.2"
    }
  }
}

resource "null_resource" "x" {}
`

// LockFor is a lock file pinning hashicorp/null 3.2.2 to hash.
func LockFor(hash string) string {
	return fmt.Sprintf("provider \"registry.opentofu.org/hashicorp/null\" {\n  version     = \"3.2.2\"\n  constraints = \"3.2.2\"\n  hashes = [\n    %q,\n  ]\n}\n", hash)
}

// KubeconfigExec is a kubeconfig whose user runs sh (touching marker) for
// its credentials: client-go runs an exec credential plugin when it first
// talks to the cluster.
func KubeconfigExec(marker string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: sh
      args: ["-c", "env > %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'"]
      interactiveMode: Never
`, marker)
}

// RemoteStateKube is a configuration fragment of the pull request tests.
const RemoteStateKube = `data "terraform_remote_state" "k" {
  backend = "kubernetes"
  config = {
    config_path   = "./kc.yaml"
    secret_suffix = "x"
  }
}
`

// PlainResource is a configuration fragment of the pull request tests.
const PlainResource = "resource \"terraform_data\" \"x\" {\n  input = \"x\"\n}\n"

// HTTPRemoteState is a data source reading another state over http
// at addr, with no credentials of its own.
func HTTPRemoteState(addr string) string {
	return "data \"terraform_remote_state\" \"peek\" {\n  backend = \"http\"\n  config = {\n    address = \"" + addr + "\"\n  }\n}\n"
}
