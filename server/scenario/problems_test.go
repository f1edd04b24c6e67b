package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
)

// A command-source credential whose command is not on the PATH is a
// problem at its block's line; one that is found is not.
func TestCredentialCommandProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "fetch-token"), []byte("#!/bin/sh\necho x\n"), 0o755)
	src := "credential \"found\" {\n  command = [\"fetch-token\"]\n  env_var = \"A\"\n}\n" +
		"credential \"lost\" {\n  command = [\"no-such-vault-cli\", \"get\"]\n  env_var = \"B\"\n}\n"
	cfg, err := config.Parse([]byte(src), filepath.Join(dir, "c.hcl"), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := server.Check(cfg, []string{"PATH=" + bin})
	if len(got) != 1 || got[0].Where != filepath.Join(dir, "c.hcl")+":5" || !strings.Contains(got[0].What, `"no-such-vault-cli" is not found`) {
		t.Errorf("problems %+v", got)
	}
}
