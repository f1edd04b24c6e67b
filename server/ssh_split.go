package server

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// splitCommand splits an SSH command line into words the way a POSIX shell
// splits a simple command, without any expansion, in one pass (linear in the
// length of the line):
//
//   - words are separated by spaces, tabs and newlines;
//   - 'single quotes' keep everything up to the next single quote literally;
//   - "double quotes" keep everything literally except that a backslash
//     escapes \" \\ \$ and \` (the backslash is dropped) and a backslash
//     before a newline removes both; any other backslash is kept;
//   - outside quotes a backslash keeps the next character literally, and a
//     backslash before a newline removes both;
//   - a pair of quotes with nothing between them gives an empty word.
//
// $, `, ;, |, & and the like have no special meaning: they are ordinary
// characters. An unterminated quote, a trailing backslash, a NUL byte or a
// line that is not UTF-8 is refused with one sentence, so that a line the
// user's shell would not have passed as meant is never guessed at.
func splitCommand(line string) ([]string, error) {
	if !utf8.ValidString(line) {
		return nil, fmt.Errorf("the command is not valid UTF-8; nothing was run")
	}
	if i := strings.IndexByte(line, 0); i >= 0 {
		return nil, fmt.Errorf("the command has a NUL byte at byte %d; nothing was run", i)
	}
	var (
		words []string
		word  strings.Builder
		in    bool // a word has started (possibly empty, from '' or "")
	)
	end := func() {
		if in {
			words = append(words, word.String())
			word.Reset()
			in = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch c {
		case ' ', '\t', '\n':
			end()
		case '\\':
			if i+1 == len(line) {
				return nil, fmt.Errorf("the command ends with a backslash that escapes nothing; nothing was run")
			}
			i++
			if line[i] == '\n' {
				continue // line continuation
			}
			in = true
			word.WriteByte(line[i])
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("the command has a single quote at byte %d that is never closed; close it and try again, nothing was run", i)
			}
			in = true
			word.WriteString(line[i+1 : i+1+j])
			i += 1 + j
		case '"':
			start := i
			in = true
			closed := false
			for i++; i < len(line); i++ {
				d := line[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '\\' && i+1 < len(line) {
					switch line[i+1] {
					case '"', '\\', '$', '`':
						i++
						word.WriteByte(line[i])
						continue
					case '\n':
						i++
						continue
					}
				}
				word.WriteByte(d)
			}
			if !closed {
				return nil, fmt.Errorf("the command has a double quote at byte %d that is never closed; close it and try again, nothing was run", start)
			}
		default:
			in = true
			word.WriteByte(c)
		}
	}
	end()
	return words, nil
}

// quoteWord quotes s for splitCommand (and a POSIX shell): single quotes,
// each single quote in s closed, escaped with a backslash and reopened.
func quoteWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
