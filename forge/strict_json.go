package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// maxJSONDepth is how deeply a delivery's objects and arrays may nest. The
// deepest forge payload (a Gitea fork's head repository and its parent)
// nests about 6 levels.
const maxJSONDepth = 32

// checkStrictJSON accepts body only when it is one JSON object, with
// nothing but white space after it, nesting at most maxJSONDepth levels,
// in which no object names a member twice at any depth. Names are
// compared as encoding/json matches them to struct fields, without regard
// to case ("action" and "Action" are the same name).
//
// Why: a repeated member name is read differently by different parsers
// (encoding/json keeps the last value, others keep the first or refuse
// the document), so a proxy, a log or a later reader of the stored
// delivery could see another action or head commit than the one
// Switchtender acted on. Forges never repeat a name, so a body that does
// is not a forge's delivery. Trailing data is refused for the same
// reason: json.Unmarshal would reject it, but a streaming reader would
// take the first value and drop the rest.
//
// It walks the body with json.Decoder.Token, holding one set of names per
// open object.
func checkStrictJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("the body is not a JSON object (a forge's delivery is one object)")
	}
	if err := walkObject(dec, 1, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the body has data after its JSON object")
	}
	return nil
}

// walkObject reads an object's members up to its closing brace, the
// opening one already read.
func walkObject(dec *json.Decoder, depth int, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("the body is not JSON: %w", err)
		}
		name, _ := tok.(string) // Token returns an object's names as strings
		member := memberPath(path, name)
		if seen[foldName(name)] {
			return fmt.Errorf("the body names the member %s twice (names are compared without regard to case); a forge never repeats one", quoteMemberName(member))
		}
		seen[foldName(name)] = true
		tok, err = dec.Token()
		if err != nil {
			return fmt.Errorf("the body is not JSON: %w", err)
		}
		if err := walkValue(dec, tok, depth, member); err != nil {
			return err
		}
	}
	return closeToken(dec)
}

// walkArray reads an array's elements up to its closing bracket.
func walkArray(dec *json.Decoder, depth int, path string) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("the body is not JSON: %w", err)
		}
		if err := walkValue(dec, tok, depth, path+"[]"); err != nil {
			return err
		}
	}
	return closeToken(dec)
}

// walkValue descends into tok when it opens an object or an array.
func walkValue(dec *json.Decoder, tok json.Token, depth int, path string) error {
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxJSONDepth {
		return fmt.Errorf("the body nests deeper than %d levels at %s; a forge's delivery does not", maxJSONDepth, quoteMemberName(path))
	}
	if d == '{' {
		return walkObject(dec, depth+1, path)
	}
	return walkArray(dec, depth+1, path)
}

func closeToken(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	return nil
}

func memberPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// foldName maps every name encoding/json would match to one struct field
// (bytes.EqualFold: Unicode simple folding, so "K", "k" and the Kelvin
// sign are one letter) to the same string.
func foldName(name string) string {
	var b strings.Builder
	for _, r := range name {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// quoteMemberName quotes a name from the body for an error, cut to 80 bytes.
func quoteMemberName(s string) string {
	if len(s) > 80 {
		s = cutDeliveryText(s, 80) + "..."
	}
	return fmt.Sprintf("%q", s)
}
