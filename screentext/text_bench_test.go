package screentext

import (
	"strings"
	"testing"
)

// BenchmarkTextOfALargePlan escapes a 10 MB plan text as the console and
// `show` do: mostly ASCII, with a non-ASCII value and an ESC every few
// hundred lines.
func BenchmarkTextOfALargePlan(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		sb.WriteString("  # terraform_data.server[1] will be updated in-place\n      ~ input = \"eu-west-1\" -> \"eu-west-2\"\n")
		if i%300 == 0 {
			sb.WriteString("      + note = \"café \x1b]0;x\x07\u202e\"\n")
		}
	}
	plan := sb.String()
	b.SetBytes(int64(len(plan)))
	for b.Loop() {
		_ = Text(plan)
	}
}
