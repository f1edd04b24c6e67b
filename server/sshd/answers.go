package sshd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/switchtender/switchtender/server/config"
)

// Bounds on the answers `launch --answers -` reads from standard input.
const (
	maxAnswersSize = 1 << 20          // bytes
	answersTimeout = 30 * time.Second // until standard input is closed
)

// answers merges --var answers with those --answers - reads from standard
// input, refusing (exit 2) a malformed document or a name given twice. A
// value is never repeated in a refusal: it may be a secret.
func (c *call) answers(f *launchFlags) (map[string]string, int) {
	if f.vars.err != nil {
		return nil, c.usageErr("launch: %v", f.vars.err)
	}
	out := f.vars.m
	switch f.answers {
	case "":
		return out, exitOK
	case "-":
	default:
		return nil, c.usageErr("launch: --answers takes - (standard input); pipe the JSON object in")
	}
	read, quoted, err := readAnswers(c.ctx, c.in)
	if err != nil {
		return nil, c.usageErr("launch: --answers -: %v", err)
	}
	if name := unquotedString(c.s.Config().Templates[c.arg(0)], read, quoted); name != "" {
		return nil, c.usageErr("launch: --answers -: answer %q is not a JSON string, and its survey field wants text; write it in double quotes (the value is not repeated here)", name)
	}
	for name, v := range read {
		if _, dup := out[name]; dup {
			return nil, c.usageErr("launch: variable %q is given both with --var and in --answers", name)
		}
		out[name] = v
	}
	return out, exitOK
}

// readAnswers reads a JSON object of survey answers from in, at most
// maxAnswersSize bytes, waiting at most answersTimeout for in to close. A
// string value is the answer as typed; any other JSON value is its compact
// JSON text (a number, true/false, a list or a map as the survey types take
// them).
func readAnswers(ctx context.Context, in io.Reader) (answers map[string]string, quoted map[string]bool, err error) {
	if in == nil {
		return nil, nil, errors.New("there is no standard input")
	}
	ctx, cancel := context.WithTimeout(ctx, answersTimeout)
	defer cancel()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, maxAnswersSize+1))
		done <- result{b, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("no JSON object arrived on standard input within %s; pipe it in and close standard input", answersTimeout)
	}
	defer clear(r.b)
	if r.err != nil {
		return nil, nil, fmt.Errorf("reading standard input: %v", r.err)
	}
	if len(r.b) > maxAnswersSize {
		return nil, nil, fmt.Errorf("standard input holds more than %d bytes; answers fit in less", maxAnswersSize)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(r.b, &doc); err != nil || doc == nil {
		return nil, nil, errors.New(`standard input is not a JSON object of answers, such as {"region":"eu-west-1","db_password":"..."}; the input is not repeated here`)
	}
	if name, dup := duplicateKey(r.b); dup {
		return nil, nil, fmt.Errorf("answer %q is given twice in the JSON object; give it once", name)
	}
	out, quoted := map[string]string{}, map[string]bool{}
	for name, raw := range doc {
		var s string
		if string(bytes.TrimSpace(raw)) == "null" {
			return nil, nil, fmt.Errorf("answer %q is null; give a value or leave it out", name)
		}
		if json.Unmarshal(raw, &s) == nil {
			out[name], quoted[name] = s, true
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil || compact.String() == "null" {
			return nil, nil, fmt.Errorf("answer %q is null or not JSON; give a value or leave it out", name)
		}
		out[name] = compact.String() // numbers keep the digits given
	}
	return out, quoted, nil
}

// duplicateKey reports the first name the top-level JSON object doc (known
// to be valid) gives twice; encoding/json would silently keep the last.
func duplicateKey(doc []byte) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(doc))
	if _, err := d.Token(); err != nil { // {
		return "", false
	}
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return "", false
		}
		name, _ := t.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// unquotedString names an answer that was not a JSON string although its
// survey field (string or choice) takes text, or "" when there is none.
// An unknown template or field is left to the launch's own check.
func unquotedString(t *config.Template, answers map[string]string, quoted map[string]bool) string {
	if t == nil {
		return ""
	}
	for _, f := range t.Survey {
		_, given := answers[f.Name]
		if given && !quoted[f.Name] && (f.Type == config.TypeString || f.Type == config.TypeChoice) {
			return f.Name
		}
	}
	return ""
}
