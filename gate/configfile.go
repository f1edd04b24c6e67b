package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Bounds on a configuration file read from a checkout: files larger or more
// deeply nested are refused with an error, before any parser sees them, so
// hostile input cannot exhaust memory or the stack.
const (
	// MaxConfigFileSize is the largest configuration file read, in bytes.
	MaxConfigFileSize = 8 << 20
	// MaxNesting is the deepest nesting accepted in a configuration file
	// (see NestingDepth).
	MaxNesting = 256
	// MaxBlocks is the most top-level blocks a configuration file may have.
	MaxBlocks = 10000
)

// ErrTooManyBlocks is wrapped by ReadConfigFile's error for a file with
// more than MaxBlocks blocks.
var ErrTooManyBlocks = errors.New("more blocks than a configuration file may have")

// ReadConfigFile reads the configuration file at path: a regular file (a
// symlink to one is followed) of at most MaxConfigFileSize bytes whose
// nesting is at most MaxNesting, with at most MaxBlocks top-level blocks. It opens the file without blocking, so a
// FIFO or device named main.tf is refused rather than hanging the caller.
func ReadConfigFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); only regular files are read as configuration", path, fi.Mode().Type())
	}
	if fi.Size() > MaxConfigFileSize {
		return nil, fmt.Errorf("%s is %d bytes, over the %d bytes a configuration file may have", path, fi.Size(), MaxConfigFileSize)
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxConfigFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxConfigFileSize {
		return nil, fmt.Errorf("%s grew past the %d bytes a configuration file may have", path, MaxConfigFileSize)
	}
	blocks, err := scanShape(src, MaxNesting)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if blocks > MaxBlocks {
		return nil, fmt.Errorf("%s has %d blocks: %w (%d)", path, blocks, ErrTooManyBlocks, MaxBlocks)
	}
	return src, nil
}
