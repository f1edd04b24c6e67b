package planview

import (
	"strings"
	"testing"
)

// TestALineThatOnlyGainsTrailingSpacesShowsThem checks that a line of a
// line diff that gains or loses spaces at its end, which a terminal draws
// as nothing, shows them as \x20 on its removed or added side, so the two
// sides never read the same; and that a line holding the text \x20 reads
// otherwise.
func TestALineThatOnlyGainsTrailingSpacesShowsThem(t *testing.T) {
	text := Text(mustBuild(t, inputChange("#!/bin/sh\necho hi\nexit 0\n", "#!/bin/sh\necho hi  \nexit 0\n")), 0)
	mustHave(t, text, "- echo hi\n", `+ echo hi\x20\x20`+"\n")
	text = Text(mustBuild(t, inputChange("a\nb\n", "a\n"+`b\x20`+"\n")), 0)
	mustHave(t, text, "- b\n", `+ b\\x20`+"\n")
	text = Text(mustBuild(t, inputChange("a\n   \nb\n", "a\n\nb\n")), 0)
	if !strings.Contains(text, `- \x20\x20\x20`+"\n") {
		t.Errorf("a line of spaces removed reads:\n%s", text)
	}
}
