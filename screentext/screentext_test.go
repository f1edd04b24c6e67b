package screentext

import (
	"encoding/json"
	"strings"
	"testing"
)

// The console dropped an OSC string up to BEL or ST with no limit, so a
// file name opening one swallowed the finding's real reason; Field shows
// the ESC and keeps everything after it, and a newline stays on the line.
func TestFieldShowsEveryHiddenCharacterAsAnEscape(t *testing.T) {
	cases := map[string]string{
		"plain":                           "plain",
		"dns.tf:4): a GET\n  no\x1b]x.tf": `dns.tf:4): a GET\n  no\x1b]x.tf`,
		"tab\there, cr\rthere":            `tab\there, cr\rthere`,
		"c1 \u009b2J del\x7f":             `c1 \u{009b}2J del\x7f`,
		"ok\u202e1.0v-esaeler\u202c":      `ok\u{202e}1.0v-esaeler\u{202c}`,
		`db["prod` + "\u034f" + `"]`:      `db["prod\u{034f}"]`,
		"bad \xff byte":                   `bad \xff byte`,
		`C:\path\x`:                       `C:\path\\x`,
		`end\`:                            `end\\`,
		`a\` + "\x1b":                     `a\\\x1b`,
		"ünïcode ✓":                       "ünïcode ✓",
	}
	for in, want := range cases {
		if got := Field(in); got != want {
			t.Errorf("Field(%q) = %q, want %q", in, got, want)
		}
	}
}

// A log or plan text is escaped rune by rune: an unterminated OSC or DCS
// in one line cuts nothing, the lines after it are all there.
func TestTextEscapesLineByLineAndCutsNothing(t *testing.T) {
	in := "  + value = <<-EOT\n        \x1bPno resource is removed\n    EOT\n  # terraform_data.a will be destroyed\nPlan: 0 to add, 0 to change, 2 to destroy.\n"
	got := Text(in)
	want := strings.Replace(in, "\x1b", `\x1b`, 1)
	if got != want {
		t.Fatalf("Text = %q, want %q", got, want)
	}
	if got := Text("a\tb\\x\n"); got != "a\tb\\x\n" {
		t.Errorf("Text changed a tab or a backslash: %q", got)
	}
	if got := Sentence("one\ntwo\\x"); got != `one\ntwo\x` {
		t.Errorf("Sentence = %q", got)
	}
}

// A log arrives in chunks: every split of it gives what the whole gives.
func TestStreamGivesTheSameTextForEverySplit(t *testing.T) {
	in := "é\x1b]0;t\x07 ok\u202e \xff\u034f\n"
	want := Text(in)
	for cut := 0; cut <= len(in); cut++ {
		var s Stream
		got := s.Write([]byte(in[:cut])) + s.Write([]byte(in[cut:])) + s.Flush()
		if got != want {
			t.Errorf("split at %d = %q, want %q", cut, got, want)
		}
	}
}

// JSON keeps the values and the JSON valid, with no hidden character raw.
func TestJSONEscapesHiddenCharactersAndKeepsTheValue(t *testing.T) {
	v := map[string]string{"k": "A\u009b2J\rB\u202eC\aD\x7fE\u034fF\U000e0041G\ufeff"}
	b, _ := json.MarshalIndent(v, "", "\t")
	out := JSON(b)
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["k"] != v["k"] {
		t.Fatalf("JSON broke the value: %s %v %q", out, err, back)
	}
	if r, bad := rawHidden(string(out), "\n\t"); bad {
		t.Fatalf("JSON left %U raw: %q", r, out)
	}
}
