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
	// MaxNesting is the deepest nesting of brackets, braces and parentheses
	// accepted in a configuration file.
	MaxNesting = 256
)

// ReadConfigFile reads the configuration file at path: a regular file (a
// symlink to one is followed) of at most MaxConfigFileSize bytes whose
// nesting is at most MaxNesting. It opens the file without blocking, so a
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
	if err := CheckNesting(src); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, nil
}

// ErrTooDeep is wrapped by CheckNesting's error.
var ErrTooDeep = errors.New("nested too deeply")

// CheckNesting refuses src when its brackets, braces and parentheses nest
// deeper than MaxNesting, naming the line where the limit is passed. It
// counts every bracket, also inside strings and comments, so it may refuse
// a file with many unbalanced brackets in strings; that fails closed.
func CheckNesting(src []byte) error {
	depth, line := 0, 1
	for _, c := range src {
		switch c {
		case '\n':
			line++
		case '{', '[', '(':
			if depth++; depth > MaxNesting {
				return fmt.Errorf("line %d: %w (more than %d levels of brackets, braces and parentheses)", line, ErrTooDeep, MaxNesting)
			}
		case '}', ']', ')':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
