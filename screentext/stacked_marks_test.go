package screentext

import (
	"strings"
	"testing"
)

// TestAStackOfCombiningMarksCannotCoverTheLinesAround checks that a run of
// combining marks longer than MaxMarks ("Zalgo" text, which a terminal
// stacks over the rows above and below its character, hiding them) shows
// its marks past MaxMarks as escapes, in every mode, while the marks of
// real words reach the screen as they are.
func TestAStackOfCombiningMarksCannotCoverTheLinesAround(t *testing.T) {
	stack := "a" + strings.Repeat("\u0346", 6) + "b" + strings.Repeat("\u0489", 5)
	want := "a" + strings.Repeat("\u0346", 4) + `\u{0346}\u{0346}b` + strings.Repeat("\u0489", 4) + `\u{0489}`
	for name, f := range map[string]func(string) string{"Field": Field, "Sentence": Sentence, "Text": Text} {
		if got := f(stack); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, stack, got, want)
		}
	}
	for _, word := range []string{"Tiếng Việt", "בְּרֵאשִׁ֖ית", "བསྒྲུབས", "e\u0301\u0302\u0323\u0300"} {
		if got := Field(word); got != word {
			t.Errorf("Field(%q) = %q", word, got)
		}
	}
}
