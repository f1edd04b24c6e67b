package sshd

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
	sp := splitter{line: line}
	for sp.i = 0; sp.i < len(line); sp.i++ {
		if err := sp.step(); err != nil {
			return nil, err
		}
	}
	sp.finishWord()
	return sp.words, nil
}

// splitter is splitCommand's state: the line, the position, the words so
// far and the word being built.
type splitter struct {
	line  string
	i     int
	words []string
	word  strings.Builder
	in    bool // a word has started (possibly empty, from '' or "")
}

// finishWord ends the word being read, if one has started, and keeps it.
func (sp *splitter) finishWord() {
	if sp.in {
		sp.words = append(sp.words, sp.word.String())
		sp.word.Reset()
		sp.in = false
	}
}

// step consumes the character at sp.i (and what it quotes or escapes).
func (sp *splitter) step() error {
	switch c := sp.line[sp.i]; c {
	case ' ', '\t', '\n':
		sp.finishWord()
	case '\\':
		return sp.backslash()
	case '\'':
		j := strings.IndexByte(sp.line[sp.i+1:], '\'')
		if j < 0 {
			return fmt.Errorf("the command has a single quote at byte %d that is never closed; close it and try again, nothing was run", sp.i)
		}
		sp.in = true
		sp.word.WriteString(sp.line[sp.i+1 : sp.i+1+j])
		sp.i += 1 + j
	case '"':
		return sp.doubleQuoted()
	default:
		sp.in = true
		sp.word.WriteByte(c)
	}
	return nil
}

// backslash keeps the next character literally; before a newline it
// removes both (a line continuation).
func (sp *splitter) backslash() error {
	if sp.i+1 == len(sp.line) {
		return fmt.Errorf("the command ends with a backslash that escapes nothing; nothing was run")
	}
	sp.i++
	if sp.line[sp.i] == '\n' {
		return nil
	}
	sp.in = true
	sp.word.WriteByte(sp.line[sp.i])
	return nil
}

// doubleQuoted consumes a double-quoted part, leaving sp.i on its closing
// quote.
func (sp *splitter) doubleQuoted() error {
	start := sp.i
	sp.in = true
	for sp.i++; sp.i < len(sp.line); sp.i++ {
		d := sp.line[sp.i]
		if d == '"' {
			return nil
		}
		if d == '\\' && sp.i+1 < len(sp.line) {
			switch sp.line[sp.i+1] {
			case '"', '\\', '$', '`':
				sp.i++
				sp.word.WriteByte(sp.line[sp.i])
				continue
			case '\n':
				sp.i++
				continue
			}
		}
		sp.word.WriteByte(d)
	}
	return fmt.Errorf("the command has a double quote at byte %d that is never closed; close it and try again, nothing was run", start)
}

// quoteWord quotes s for splitCommand (and a POSIX shell): single quotes,
// each single quote in s closed, escaped with a backslash and reopened.
func quoteWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
