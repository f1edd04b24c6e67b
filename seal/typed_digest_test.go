package seal

import (
	"strings"
	"testing"
)

// TestATypedDigestSaysWhatIsWrongWithIt guards the sentence a person reads
// after pasting a digest placeholder: "sha256:…" was once said to have "3
// hex digits" (it counted the bytes of the ellipsis, and has none).
func TestATypedDigestSaysWhatIsWrongWithIt(t *testing.T) {
	cases := map[string]string{
		"sha256:…":                          `holds '…'`,
		"sha256:...":                        `holds '.'`,
		"sha256:abc":                        "has 3 hex digits",
		"sha256:" + strings.Repeat("A", 64): `holds 'A'`,
		"abc":                               `does not start with "sha256:"`,
	}
	for in, want := range cases {
		err := CheckDigest(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDigest(%q) = %v, want it to say %s", in, err, want)
		}
	}
	if err := CheckDigest("sha256:" + strings.Repeat("a", 64)); err != nil {
		t.Errorf("a well-formed digest: %v", err)
	}
}
