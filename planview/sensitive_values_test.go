package planview

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// forms are the ways a value can be written in a string of the change set.
func forms(v string) []string {
	q := strconv.Quote(v)
	j, _ := json.Marshal(v)
	return []string{v, q[1 : len(q)-1], string(j[1 : len(j)-1]), base64.StdEncoding.EncodeToString([]byte(v))}
}

// noneLeaks fails t when any form of a canary is in the JSON of cs, or in
// any of its strings after an identity Mask.
func noneLeaks(t *testing.T, cs *ChangeSet, canaries ...string) {
	t.Helper()
	out, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	all.Write(out)
	cs.Mask(func(s string) string { all.WriteString(s); all.WriteByte(0); return s })
	for _, c := range canaries {
		for _, f := range forms(c) {
			if strings.Contains(all.String(), f) {
				t.Errorf("sensitive value %q (as %q) is in the change set:\n%s", c, f, out)
				break
			}
		}
	}
}

func TestNoSensitiveValueOfARealPlanReachesTheChangeSet(t *testing.T) {
	canaries := []string{"canary-rotated-before-7d1f", "canary-rotated-after-5c2a", "canary-kept-3b9e"}
	plan, err := os.ReadFile(planPath("sensitive"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range canaries {
		if !strings.Contains(string(plan), c) {
			t.Fatalf("the plan does not hold %q: the test would prove nothing", c)
		}
	}
	cs := committedChangeSet(t, "sensitive")
	noneLeaks(t, cs, canaries...)
	// OpenTofu leaves the output attribute, a copy of the input, unmarked:
	// its parts holding the values are still sensitive paths.
	r := resourceAt(t, cs, "terraform_data.credentials")
	for _, path := range []string{"output.kept", "output.rotated"} {
		if a := attributeAt(t, r, path); !a.Sensitive || !a.Unknown || a.BeforeFingerprint == "" {
			t.Errorf("%s: %+v", path, a)
		}
	}
	if a := attributeAt(t, r, "output.owner"); a.Sensitive || a.Before != `"team-a"` {
		t.Errorf("output.owner, not sensitive: %+v", a)
	}
}

// hostilePlan places sensitive values everywhere a view could show one:
// each canary is marked sensitive somewhere, and copied unmarked elsewhere.
const hostilePlan = `{"format_version":"1.2",
"variables":{"db_password":{"value":"CANARY-variable-only"},"region":{"value":"eu-west-1"}},
"resource_changes":[
 {"address":"terraform_data.reads_before_the_marked_one","mode":"managed","type":"terraform_data","name":"a",
  "change":{"actions":["update"],
   "before":{"input":"x","url":"postgres://app:CANARY-later-marked@db:5432/app","doc":"{\"password\":\"CANARY-later-marked\"}","key_holder":{"CANARY-as-a-key-9z":1}},
   "after":{"input":"y","url":"postgres://app:CANARY-variable-only@db:5432/app","doc":"{\"password\":\"other\"}","key_holder":{"CANARY-as-a-key-9z":2}},
   "after_unknown":{},"before_sensitive":{},"after_sensitive":{}}},
 {"address":"terraform_data.marked","mode":"managed","type":"terraform_data","name":"m",
  "change":{"actions":["update"],
   "before":{"json":"{\"a\":\"CANARY-json-before\"}","heredoc":"line one\nCANARY-heredoc-before\nline three\n","list":["ok","CANARY-in-a-list"],"obj":{"user":"u","pass":"CANARY-in-an-object"},"whole":{"k":"CANARY-whole-object","n":[1,2]},"later":"CANARY-later-marked","key":{"CANARY-as-a-key-9z":1},"keyu":{"CANARY-as-a-key-9z":{"a":"b"}}},
   "after":{"json":"{\"a\":\"CANARY-json-after\"}","heredoc":"line one\nCANARY-heredoc-after\nline three\n","list":"now a string","whole":{"k":"CANARY-whole-after","n":[1]},"later":"CANARY-later-marked","key":{"CANARY-as-a-key-9z":2}},
   "after_unknown":{"obj":true,"keyu":true},
   "before_sensitive":{"json":true,"heredoc":true,"list":[false,true],"obj":{"pass":true},"whole":true,"later":true,"key":true},
   "after_sensitive":{"json":true,"heredoc":true,"whole":true,"later":true,"key":true}}},
 {"address":"terraform_data.noop_holding_one","mode":"managed","type":"terraform_data","name":"n",
  "change":{"actions":["no-op"],"before":{"token":"CANARY-in-a-noop"},"after":{"token":"CANARY-in-a-noop"},"after_unknown":{},"before_sensitive":{"token":true},"after_sensitive":{"token":true}}},
 {"address":"terraform_data.copies","mode":"managed","type":"terraform_data","name":"c",
  "change":{"actions":["create"],"before":null,
   "after":{"from_noop":"CANARY-in-a-noop","from_output":"CANARY-output-value","short":"pw1","nested":[{"v":"Bearer CANARY-in-an-object"}]},
   "after_unknown":{},"before_sensitive":false,"after_sensitive":{}}},
 {"address":"terraform_data.short","mode":"managed","type":"terraform_data","name":"s",
  "change":{"actions":["update"],"before":{"pin":"pw1"},"after":{"pin":"pw2"},"after_unknown":{},"before_sensitive":{"pin":true},"after_sensitive":{"pin":true}}}
],
"resource_drift":[
 {"address":"terraform_data.marked","mode":"managed","type":"terraform_data","name":"m",
  "change":{"actions":["update"],"before":{"later":"CANARY-drift-before"},"after":{"later":"CANARY-drift-after"},"after_unknown":{},"before_sensitive":{"later":true},"after_sensitive":{"later":true}}}
],
"output_changes":{
 "conn":{"actions":["update"],"before":{"host":"db","password":"CANARY-output-nested"},"after":{"host":"db2","password":"CANARY-output-nested"},"after_unknown":false,"before_sensitive":{"password":true},"after_sensitive":{"password":true}},
 "token":{"actions":["create"],"before":null,"after":"CANARY-output-value","after_unknown":false,"before_sensitive":false,"after_sensitive":false},
 "echo":{"actions":["create"],"before":null,"after":"CANARY-in-a-list and more","after_unknown":false,"before_sensitive":false,"after_sensitive":false},
 "same":{"actions":["update"],"before":{"a":"CANARY-output-same","b":"CANARY-in-a-noop"},"after":{"a":"CANARY-output-same","b":"CANARY-in-a-noop"},"after_unknown":false,"before_sensitive":{},"after_sensitive":{"a":true}},
 "partly_unknown":{"actions":["update"],"before":{"k":"CANARY-partly-before"},"after":{},"after_unknown":{"k":true},"before_sensitive":true,"after_sensitive":true}
},
"planned_values":{"outputs":{"token":{"sensitive":true,"type":"string","value":"CANARY-output-value"}}},
"configuration":{"root_module":{"variables":{"db_password":{"sensitive":true},"region":{}}}}
}`

func TestNoSensitiveValueReachesAnyStringOfTheChangeSet(t *testing.T) {
	canaries := regexp.MustCompile(`CANARY-[a-z0-9-]+`).FindAllString(hostilePlan, -1)
	if len(canaries) < 15 {
		t.Fatalf("only %d canaries", len(canaries))
	}
	cs := mustBuild(t, []byte(hostilePlan))
	noneLeaks(t, cs, append(canaries, "pw1", "pw2")...)
}

func TestWhatIsSensitiveIsListedWithoutItsValue(t *testing.T) {
	cs := mustBuild(t, []byte(hostilePlan))
	m := resourceAt(t, cs, "terraform_data.marked")
	for path, changed := range map[string]bool{"json": true, "heredoc": true, "whole": true, "later": false, "key": true} {
		a := attributeAt(t, m, path)
		if !a.Sensitive || a.Changed != changed || a.BeforeFingerprint == "" || a.AfterFingerprint == "" || a.JSON != nil || a.Lines != nil {
			t.Errorf("%s: %+v, want sensitive, changed %v, with fingerprints", path, a, changed)
		}
	}
	for _, p := range paths(m) {
		if strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(p, "obj."), "list"), ".[") {
			t.Errorf("%s: a wholly sensitive value is descended into", p)
		}
	}
	if a := attributeAt(t, m, "keyu"); !a.Sensitive || !a.Unknown || a.BeforeFingerprint == "" {
		t.Errorf("keyu, a map keyed by a secret: %+v", a)
	}
	if a := attributeAt(t, m, "obj.pass"); !a.Sensitive || !a.Unknown {
		t.Errorf("obj.pass: %+v", a)
	}
}

func TestASensitiveOutputIsListedWithoutItsValue(t *testing.T) {
	cs := mustBuild(t, []byte(hostilePlan))
	outputs := map[string]Attribute{}
	for _, o := range cs.Outputs {
		outputs[o.Name] = o.Change
	}
	if a := outputs["same"]; !a.Sensitive || a.Changed || a.BeforeFingerprint == "" || a.BeforeFingerprint != a.AfterFingerprint {
		t.Errorf("output same, whose sensitivity only changes: %+v", a)
	}
	if a := outputs["partly_unknown"]; !a.Sensitive || !a.Changed || !a.Unknown || a.AfterFingerprint != "" {
		t.Errorf("output partly_unknown: %+v", a)
	}
}

func TestACopyOfASensitiveValueIsASensitivePathToo(t *testing.T) {
	cs := mustBuild(t, []byte(hostilePlan))
	copies := resourceAt(t, cs, "terraform_data.copies")
	for _, p := range []string{"from_noop", "from_output", "short", "nested[0].v"} {
		if a := attributeAt(t, copies, p); !a.Sensitive || a.AfterFingerprint == "" {
			t.Errorf("%s copies a sensitive value: %+v", p, a)
		}
	}
	noop := cs.Resources
	for _, r := range noop {
		if r.Address == "terraform_data.noop_holding_one" {
			t.Errorf("a plain no-op is listed")
		}
	}
	if fromNoop := attributeAt(t, copies, "from_noop"); fromNoop.AfterFingerprint != testFP.Fingerprint(`"CANARY-in-a-noop"`) {
		t.Errorf("a copy of a sensitive value has fingerprint %s, want that of the value", fromNoop.AfterFingerprint)
	}
}

func TestAnUnchangedSensitivePathIsListedWithEqualFingerprints(t *testing.T) {
	cs := committedChangeSet(t, "sensitive")
	r := resourceAt(t, cs, "terraform_data.credentials")
	kept := attributeAt(t, r, "input.kept")
	if !kept.Sensitive || kept.Changed || kept.BeforeFingerprint == "" || kept.BeforeFingerprint != kept.AfterFingerprint || kept.Before != "" || kept.After != "" {
		t.Errorf("input.kept: %+v, want sensitive, unchanged, equal fingerprints", kept)
	}
	rotated := attributeAt(t, r, "input.rotated")
	if !rotated.Sensitive || !rotated.Changed || rotated.BeforeFingerprint == rotated.AfterFingerprint {
		t.Errorf("input.rotated: %+v, want sensitive, changed, different fingerprints", rotated)
	}
}

func TestEqualValuesHaveEqualFingerprintsWhateverTheirPath(t *testing.T) {
	cs := committedChangeSet(t, "sensitive")
	rotated := attributeAt(t, resourceAt(t, cs, "terraform_data.credentials"), "input.rotated")
	token := attributeAt(t, resourceAt(t, cs, "terraform_data.token"), "input")
	out := cs.Outputs[0].Change
	if cs.Outputs[0].Name != "token" || !out.Sensitive || !out.Changed {
		t.Fatalf("output token: %+v", cs.Outputs[0])
	}
	for _, a := range []Attribute{token, out} {
		if a.BeforeFingerprint != rotated.BeforeFingerprint || a.AfterFingerprint != rotated.AfterFingerprint {
			t.Errorf("%s fingerprints %s -> %s, want those of input.rotated %s -> %s",
				a.Path, a.BeforeFingerprint, a.AfterFingerprint, rotated.BeforeFingerprint, rotated.AfterFingerprint)
		}
	}
	if testFP.Fingerprint(`{"b":[1,2],"a":"x"}`) != testFP.Fingerprint("{ \"a\": \"x\",\n \"b\": [1, 2] }") {
		t.Error("the same value written two ways has two fingerprints")
	}
}

func TestAFingerprintIsAKeyedHMACOfTheCanonicalJSON(t *testing.T) {
	key := []byte("a key only the server holds")
	fp := NewFingerprinter(key)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(`{"a":"x","b":[1,2]}`))
	want := "fp:" + hex.EncodeToString(m.Sum(nil))[:12]
	if got := fp.Fingerprint(`{"b":[1,2],"a":"x"}`); got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
	if !regexp.MustCompile(`^fp:[0-9a-f]{12}$`).MatchString(want) {
		t.Errorf("form %s", want)
	}
}

func TestAGuessableValueHasAFingerprintNoPlainHashGives(t *testing.T) {
	hashes := map[string]func() hash.Hash{
		"sha256": sha256.New, "sha1": sha1.New, "md5": md5.New, "sha512": sha512.New,
		"hmac-sha256 with an empty key":  func() hash.Hash { return hmac.New(sha256.New, nil) },
		"hmac-sha256 keyed by the value": nil,
	}
	for _, guess := range []string{"hunter2", "1", "password", "true", ""} {
		got := testFP.Fingerprint(strconv.Quote(guess))
		digits := strings.TrimPrefix(got, FingerprintPrefix)
		encodings := []string{guess, strconv.Quote(guess), guess + "\n", `{"value":` + strconv.Quote(guess) + `}`, base64.StdEncoding.EncodeToString([]byte(guess))}
		for name, h := range hashes {
			for _, enc := range encodings {
				var sum []byte
				if h == nil {
					m := hmac.New(sha256.New, []byte(guess))
					m.Write([]byte(enc))
					sum = m.Sum(nil)
				} else {
					m := h()
					m.Write([]byte(enc))
					sum = m.Sum(nil)
				}
				if hx := hex.EncodeToString(sum); strings.Contains(hx, digits) {
					t.Errorf("the fingerprint %s of %q is in the %s of %q", got, guess, name, enc)
				}
			}
		}
	}
}

func TestDifferentKeysGiveDifferentFingerprints(t *testing.T) {
	a := NewFingerprinter([]byte("key one")).Fingerprint(`"hunter2"`)
	b := NewFingerprinter([]byte("key two")).Fingerprint(`"hunter2"`)
	if a == b {
		t.Errorf("two keys give %s for the same value", a)
	}
	if NewFingerprinter([]byte("key one")).Fingerprint(`"hunter2"`) != a {
		t.Error("the same key gives two fingerprints")
	}
	if testFP.Fingerprint(`"hunter2"`) == testFP.Fingerprint(`"hunter3"`) {
		t.Error("two values have one fingerprint")
	}
}

func TestTheFingerprintKeyIsCopied(t *testing.T) {
	key := []byte("mutable key")
	fp := NewFingerprinter(key)
	before := fp.Fingerprint(`"x"`)
	key[0] = 'X'
	if fp.Fingerprint(`"x"`) != before {
		t.Error("changing the caller's key bytes changed the fingerprints")
	}
}
