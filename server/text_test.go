package server

import "testing"

func TestPrintable(t *testing.T) {
	cases := map[string]string{
		"plain\ttext\n":            "plain\ttext\n",
		"\x1b[2J\x1b[HAll clear":   `\x1b[2J\x1b[HAll clear`,
		"over\rwrite":              `over\x0dwrite`,
		"del\x7f, bell\a, ünïcode": `del\x7f, bell\x07, ünïcode`,
	}
	for in, want := range cases {
		if got := string(printable([]byte(in))); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
		if got := printableString(in); got != want {
			t.Errorf("printableString(%q) = %q, want %q", in, got, want)
		}
	}
	if got := oneLine("line1\nline2"); got != `"line1\nline2"` {
		t.Errorf("oneLine = %s", got)
	}
	if got := oneLine("eu-west-1 a"); got != "eu-west-1 a" {
		t.Errorf("oneLine = %s", got)
	}
}
