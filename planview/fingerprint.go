package planview

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// Fingerprinter makes the keyed fingerprints of sensitive values. The zero
// value has no key, and Build refuses it.
type Fingerprinter struct{ key []byte }

// NewFingerprinter returns a Fingerprinter under key: secret bytes only the
// server holds (seal.Key.Derive("plan fingerprint")). The key is copied. An
// empty key gives a Fingerprinter Build refuses with ErrNoFingerprintKey.
func NewFingerprinter(key []byte) Fingerprinter {
	return Fingerprinter{key: bytes.Clone(key)}
}

// ErrNoFingerprintKey is returned by Build when its Fingerprinter has no
// key: a fingerprint under an empty or public key would let anyone who can
// guess a sensitive value confirm it.
var ErrNoFingerprintKey = errors.New("the plan fingerprint key is empty; give NewFingerprinter the server's key (seal.Key.Derive)")

// FingerprintPrefix starts every fingerprint.
const FingerprintPrefix = "fp:"

// fingerprintHexLen is how many hex digits of the HMAC a fingerprint keeps
// (48 bits: enough to tell values apart at a glance, not to store).
const fingerprintHexLen = 12

// Fingerprint returns the fingerprint of a JSON value given as its JSON text:
// "fp:" followed by the first 12 lowercase hex digits of
// HMAC-SHA256(key, canonical JSON of the value). The canonical JSON is what
// encoding/json writes for the decoded value with numbers kept as written,
// object keys sorted, no insignificant white space and no HTML escaping, so
// equal values have equal fingerprints whatever their formatting. It is the
// same for the same value under the same key, whatever the path or plan, and
// cannot be checked against a guess without the key. JSON that does not
// parse is fingerprinted as given.
func (f Fingerprinter) Fingerprint(valueJSON string) string {
	v, _, err := parseDocument(valueJSON)
	if err != nil {
		return f.sum([]byte(valueJSON))
	}
	return f.fingerprint(v)
}

func (f Fingerprinter) fingerprint(v *node) string {
	return f.sum(canonicalJSON(v))
}

func (f Fingerprinter) sum(b []byte) string {
	m := hmac.New(sha256.New, f.key)
	m.Write(b)
	return FingerprintPrefix + hex.EncodeToString(m.Sum(nil))[:fingerprintHexLen]
}

// canonicalJSON writes v as encoding/json would write its decoded value:
// members sorted by key (a node's are), numbers as written, no HTML
// escaping, no white space.
func canonicalJSON(v *node) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// A node always encodes: strings, json.Number and nested values only.
	_ = enc.Encode(plainValue(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// plainValue converts a node to the values encoding/json writes.
func plainValue(v *node) any {
	if v == nil {
		return nil
	}
	switch v.kind {
	case kindBool:
		return v.isTrue()
	case kindNumber:
		return json.Number(v.text())
	case kindString:
		return v.text()
	case kindArray:
		out := make([]any, len(v.kids))
		for i, k := range v.kids {
			out[i] = plainValue(k)
		}
		return out
	case kindObject:
		out := make(map[string]any, len(v.kids))
		for i, k := range v.kids {
			out[string(v.keys[i])] = plainValue(k)
		}
		return out
	}
	return nil
}
