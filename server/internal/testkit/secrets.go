package testkit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
)

// Canaries of the secrets test: each secret a run meets, distinct and long
// enough to be masked, so that finding one anywhere is a leak.
const (
	CanaryDB    = `db-canary-"Q"-4b81c2e9` // a variable the configuration declares sensitive
	CanaryNote  = "note-canary-93ac1d7e"   // a plain variable whose survey field is sensitive
	CanaryCloud = "cloud-canary-5e2f9a10"  // an env credential
	CanaryVault = "vault-canary-c0ffee42"  // what a command-source credential prints
)

// CanaryDerived is the value infra/secret derives from the password and
// marks sensitive: only the saved plan says it is sensitive.
func CanaryDerived() string {
	sum := sha256.Sum256([]byte(CanaryDB))
	return "derived-" + hex.EncodeToString(sum[:])
}

// Forms are the encodings a secret commonly appears in: as is, JSON-escaped
// (inside a JSON string), base64 (standard and URL alphabets) and
// URL-encoded.
func Forms(secret string) []string {
	j, _ := json.Marshal(secret)
	out := []string{
		secret,
		string(j[1 : len(j)-1]),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret),
	}
	return out
}
