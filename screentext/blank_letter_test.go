package screentext

import "testing"

// TestABlankLetterIsEscapedAndMarked checks U+2800, the blank Braille
// pattern: a symbol, not a space, so no space or format rule catches it,
// yet it draws nothing. A for_each key "a\u2800b" would read as "a b" and
// a destroy of one as the other's; it is escaped, and an address holding
// it is marked as a lookalike, with a twin or without.
func TestABlankLetterIsEscapedAndMarked(t *testing.T) {
	if got := Field("a\u2800b"); got != `a\u{2800}b` {
		t.Errorf("Field = %q", got)
	}
	spaced, blank := `terraform_data.x["a b"]`, "terraform_data.x[\"a\u2800b\"]"
	if got := Lookalikes([]string{spaced, blank}); len(got) != 2 || got[1].Address != blank || got[1].LooksLike != spaced {
		t.Errorf("Lookalikes of %q and %q = %+v", spaced, blank, got)
	}
	if got := Lookalikes([]string{blank}); len(got) != 1 {
		t.Errorf("Lookalikes of %q alone = %+v", blank, got)
	}
}
