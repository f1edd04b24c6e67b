package scan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The generated part of docs/scan-file-arguments.md lies between these.
const (
	pageBegin = "<!-- begin: fileArguments in scan/fileargs.go; TestFileArgumentsPageIsTheScansTable checks it -->\n"
	pageEnd   = "<!-- end -->\n"
)

// fileArgumentsTable renders fileArguments as the page's Markdown table.
func fileArgumentsTable() string {
	var b strings.Builder
	b.WriteString("| block | type | argument | the scan | what it names |\n|---|---|---|---|---|\n")
	for _, a := range fileArguments {
		verdict := "no finding"
		if a.runs {
			verdict = "**finding**"
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", a.kind, a.typ, a.name, verdict, a.what)
	}
	return b.String()
}

// TestFileArgumentsPageIsTheScansTable checks that the page listing the
// file arguments of OpenTofu's backends and key providers shows the table
// the scan reads them by, so the page says what the scan does. The break
// it guards: the README named five arguments while OpenTofu accepted a
// sixth spelling, which the scan did not know.
func TestFileArgumentsPageIsTheScansTable(t *testing.T) {
	src, err := os.ReadFile("../docs/scan-file-arguments.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok1 := strings.Cut(string(src), pageBegin)
	got, _, ok2 := strings.Cut(rest, pageEnd)
	if want := fileArgumentsTable(); !ok1 || !ok2 || got != want {
		t.Errorf("docs/scan-file-arguments.md does not hold the scan's table between its markers; it should read:\n%s%s%s", pageBegin, want, pageEnd)
	}
}
