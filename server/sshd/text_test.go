package sshd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/screentext"
)

func TestPrintable(t *testing.T) {
	cases := map[string]string{
		"plain\ttext\n":            "plain\ttext\n",
		"\x1b[2J\x1b[HAll clear":   `\x1b[2J\x1b[HAll clear`,
		"over\rwrite":              `over\rwrite`,
		"del\x7f, bell\a, ünïcode": `del\x7f, bell\x07, ünïcode`,
		"c1 \u009b2J":              `c1 \u{009b}2J`,
		"bidi \u202etxt.exe":       `bidi \u{202e}txt.exe`,
		"bad \xff byte":            `bad \xff byte`,
	}
	for in, want := range cases {
		if got := string(printable([]byte(in))); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
		// Every split of the stream gives the same as the whole.
		for cut := 0; cut <= len(in); cut++ {
			var b bytes.Buffer
			w := newSafeWriter(&b)
			w.Write([]byte(in[:cut]))
			w.Write([]byte(in[cut:]))
			w.Flush()
			if b.String() != want {
				t.Errorf("split %q at %d = %q, want %q", in, cut, b.String(), want)
			}
		}
	}
}

func TestJSONSafe(t *testing.T) {
	v := map[string]string{"region": "A\u009b2J\rB\u202eC\aD\x7fE"}
	b, _ := json.Marshal(v)
	out := jsonSafe(b)
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["region"] != v["region"] {
		t.Fatalf("jsonSafe broke the JSON: %s %v %q", out, err, back)
	}
	if strings.ContainsAny(string(out), "\u009b\u202e\x7f\r\a") {
		t.Fatalf("jsonSafe left raw controls: %q", out)
	}
}

// printable makes text from runs (log bytes, plan text, messages) safe to
// print on a person's terminal, rune by rune, as screentext.Text does: a
// hidden character is shown as its escape, newlines and tabs stay.
func printable(b []byte) []byte { return []byte(screentext.Text(string(b))) }
