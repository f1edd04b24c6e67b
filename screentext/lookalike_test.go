package screentext

import (
	"reflect"
	"testing"
)

// OpenTofu escapes format characters in addresses but not nonspacing
// marks: for_each keys "prod" and "prod\u034f" both rendered as
// db["prod"], and nothing told the approver which one a destroy removes.
func TestLookalikesTellAddressesThatReadTheSameApart(t *testing.T) {
	plain, marked := `terraform_data.db["prod"]`, `terraform_data.db["prod`+"\u034f"+`"]`
	got := Lookalikes([]string{plain, marked, `terraform_data.db["dev"]`})
	want := []Lookalike{
		{Address: plain, LooksLike: marked, DiffersBy: []string{"U+034F"}},
		{Address: marked, LooksLike: plain, DiffersBy: []string{"U+034F"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Lookalikes = %+v, want %+v", got, want)
	}
	if s := got[1].String(); s != `looks like terraform_data.db["prod"]: differs by U+034F` {
		t.Errorf("mark = %q", s)
	}
	if s := got[0].String(); s != `looks like terraform_data.db["prod\u{034f}"]: differs by U+034F` {
		t.Errorf("mark = %q", s)
	}
}

// An address disguised on its own is marked even with no twin in the plan:
// a combining mark, a zero-width character, a Cyrillic letter in a Latin
// word; plain non-Latin keys and composed accents are not.
func TestLookalikesMarkADisguisedAddressWithoutATwin(t *testing.T) {
	cases := map[string]string{
		`a.b["prod` + "\u0301" + `"]`: `a.b["prod"]`,
		`a.b["pro` + "\u200b" + `d"]`: `a.b["prod"]`,
		`a.b["` + "р" + `rod"]`:       `a.b["prod"]`, // Cyrillic er
		`a.b["ｐrod"]`:                 `a.b["prod"]`, // fullwidth p reads as p only through NFKD, in a twin
		`a.b["сервер"]`:               "",
		`a.b["Zürich"]`:               "",
		`a.b["日本"]`:                   "",
		`terraform_data.server[2]`:    "",
	}
	for addr, looks := range cases {
		got := Lookalikes([]string{addr})
		switch {
		case looks == "" && len(got) > 0:
			t.Errorf("%q marked: %+v", addr, got)
		case looks != "" && addr == `a.b["ｐrod"]`:
			// fullwidth letters are visible as such alone; with a twin they are marked:
			if tw := Lookalikes([]string{addr, looks}); len(tw) != 2 {
				t.Errorf("%q and %q not told apart: %+v", addr, looks, tw)
			}
		case looks != "" && (len(got) != 1 || got[0].LooksLike != looks):
			t.Errorf("%q: got %+v, want it marked as looking like %q", addr, got, looks)
		}
	}
}
