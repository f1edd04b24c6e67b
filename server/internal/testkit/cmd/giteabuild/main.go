// Command giteabuild builds the Gitea the forge tests run, once, into the
// cache (testkit.EnsureGitea): go run ./server/internal/testkit/cmd/giteabuild.
// It prints what it does, prints the binary's path, and exits 0 when the
// binary was already there; it exits 1 when Gitea cannot be built.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	fmt.Fprintf(os.Stderr, "Gitea %s for the forge tests: %s\n", testkit.GiteaVersion, testkit.GiteaBinaryPath())
	bin, err := testkit.EnsureGitea(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "giteabuild: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
