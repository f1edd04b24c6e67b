package seal

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"golang.org/x/crypto/curve25519"
)

// A derived secret is the same for the same key and purpose, differs for
// another purpose or another key, and neither is nor holds the identity it
// comes from, in any form the identity is written in.
func TestADerivedSecretDiffersByPurposeAndKeyAndNeverHoldsTheIdentity(t *testing.T) {
	k, other := mustKey(t), mustKey(t)
	fp := k.Derive("plan fingerprint")
	if len(fp) != 32 {
		t.Fatalf("Derive gave %d bytes, want 32", len(fp))
	}
	if again := k.Derive("plan fingerprint"); !bytes.Equal(fp, again) {
		t.Error("the same key and purpose derive different secrets")
	}
	again, err := ParseKey(k.MarshalIdentity())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fp, again.Derive("plan fingerprint")) {
		t.Error("the key read back from its identity derives another secret")
	}
	for what, d := range map[string][]byte{
		"another purpose":        k.Derive("plan fingerprint2"),
		"an empty purpose":       k.Derive(""),
		"another key":            other.Derive("plan fingerprint"),
		"a purpose by one case":  k.Derive("Plan fingerprint"),
		"a purpose with a space": k.Derive("plan fingerprint "),
	} {
		if bytes.Equal(fp, d) {
			t.Errorf("%s derives the same secret", what)
		}
	}
	identity := k.MarshalIdentity()
	scalar := bech32Data(t, identity)
	if pub, err := curve25519.X25519(scalar, curve25519.Basepoint); err != nil || !bytes.Equal(pub, bech32Data(t, k.Recipient())) {
		t.Fatalf("the identity's decoded scalar is not the key's (%v), so this test would prove nothing", err)
	}
	for _, form := range [][]byte{fp, []byte(hex.EncodeToString(fp)), []byte(base64.StdEncoding.EncodeToString(fp))} {
		if bytes.Contains(form, []byte(identity)) || bytes.Contains(bytes.ToUpper(form), []byte(identity[16:30])) {
			t.Errorf("the derived secret holds the identity's text")
		}
		for i := 0; i+8 <= len(scalar); i++ {
			if bytes.Contains(form, scalar[i:i+8]) {
				t.Fatalf("the derived secret holds 8 bytes of the identity's scalar at %d", i)
			}
		}
	}
}

// bech32Data decodes the data part of a bech32 string (its checksum left
// off) to bytes: the secret scalar of an age identity.
func bech32Data(t *testing.T, s string) []byte {
	t.Helper()
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	s = strings.ToLower(s)
	i := strings.LastIndexByte(s, '1')
	if i < 0 || len(s)-i-1 < 6 {
		t.Fatalf("%d characters are not bech32", len(s))
	}
	var out []byte
	acc, bits := 0, 0
	for _, c := range s[i+1 : len(s)-6] {
		v := strings.IndexRune(charset, c)
		if v < 0 {
			t.Fatal("not a bech32 character in the identity")
		}
		acc, bits = acc<<5|v, bits+5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
			acc &= 1<<bits - 1
		}
	}
	return out
}
