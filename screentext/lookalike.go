package screentext

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Lookalike marks an address that a person could take for another: it
// holds a hidden character, a combining mark or a letter of another script
// that looks Latin inside a Latin word, or it looks the same as another
// address of the same list once rendered.
type Lookalike struct {
	// Address is the marked address, as it is (escape it to show it).
	Address string `json:"address"`
	// LooksLike is what a person would read: the other address it looks
	// the same as, or else the address without what disguises it.
	LooksLike string `json:"looks_like"`
	// DiffersBy names the characters that tell them apart, as U+NNNN.
	DiffersBy []string `json:"differs_by"`
}

// String is the mark as the console and the plain commands show it:
// `looks like terraform_data.db["prod"]: differs by U+034F`, both
// addresses escaped with Field.
func (l Lookalike) String() string {
	return fmt.Sprintf("looks like %s: differs by %s", Field(l.LooksLike), strings.Join(l.DiffersBy, ", "))
}

// Lookalikes marks, in order, every address of addrs (duplicates count
// once) that is disguised or looks the same as another of them once
// rendered: two addresses look the same when their skeletons (NFKD, hidden
// characters and combining marks dropped, Latin lookalikes of other scripts
// read as Latin) are equal.
func Lookalikes(addrs []string) []Lookalike {
	bySkeleton := map[string][]string{}
	var order []string
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			continue
		}
		seen[a] = true
		order = append(order, a)
		k := skeleton(a)
		bySkeleton[k] = append(bySkeleton[k], a)
	}
	var out []Lookalike
	for _, a := range order {
		k := skeleton(a)
		twins := slices.DeleteFunc(slices.Clone(bySkeleton[k]), func(o string) bool { return o == a })
		switch {
		case len(twins) > 0:
			out = append(out, Lookalike{Address: a, LooksLike: twins[0], DiffersBy: differing(a, twins[0])})
		case disguised(a):
			out = append(out, Lookalike{Address: a, LooksLike: k, DiffersBy: differing(a, k)})
		}
	}
	return out
}

// skeleton is how s reads: its NFKD form with hidden characters and
// combining marks dropped, U+2800 read as a space and Latin lookalikes
// read as the Latin letter.
func skeleton(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		switch {
		case r == 0x2800: // the blank Braille pattern reads as a space
			b.WriteByte(' ')
		case Hidden(r) || unicode.In(r, unicode.Mn, unicode.Me):
		case latinLookalike[r] != 0:
			b.WriteRune(latinLookalike[r])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// disguised reports whether s holds a hidden character, a combining mark
// as it is (not composed into a letter), or a word that mixes Latin
// letters with another script's Latin lookalikes.
func disguised(s string) bool {
	for _, r := range norm.NFC.String(s) {
		if Hidden(r) || unicode.In(r, unicode.Mn, unicode.Me) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		latin := strings.ContainsFunc(w, func(r rune) bool { return r < 0x80 && unicode.IsLetter(r) })
		if latin && strings.ContainsFunc(w, func(r rune) bool { return latinLookalike[r] != 0 }) {
			return true
		}
	}
	return false
}

// differing names, as U+NNNN in order, the characters that are in one of a
// and b but not in the other.
func differing(a, b string) []string {
	var out []string
	add := func(x, y string) {
		for _, r := range x {
			u := fmt.Sprintf("U+%04X", r)
			if !strings.ContainsRune(y, r) && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	add(a, b)
	add(b, a)
	return out
}

// latinLookalike maps letters of the Cyrillic and Greek scripts (and a few
// others) to the Latin letter they look like in common fonts, after
// Unicode's confusables data (UTS #39) for the letters an identifier or a
// key is likely to hold.
var latinLookalike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'B', 'е': 'e', 'ѐ': 'e', 'ё': 'e', 'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l',
	'м': 'M', 'н': 'H', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 'T', 'у': 'y', 'х': 'x', 'ѕ': 's', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'ь': 'b', 'ү': 'y', 'ɡ': 'g',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'У': 'Y', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ү': 'Y', 'Ӏ': 'I',
	// Greek
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'ι': 'i', 'κ': 'k', 'χ': 'x', 'ϲ': 'c', 'ϳ': 'j',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C',
	// Latin letters that read as other Latin letters
	'ı': 'i', 'ȷ': 'j', 'ɩ': 'i', 'ʏ': 'y', 'ℓ': 'l',
	// Armenian
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g',
}
