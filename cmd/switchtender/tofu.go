package main

import (
	"context"
	"fmt"
	"io"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// cmdTofu finds or builds the pinned OpenTofu and prints its path.
func cmdTofu(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := tofubin.Ensure(ctx, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, p)
	return nil
}
