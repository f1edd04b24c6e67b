package planview

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fill sets every string reachable from v to a distinct "secret-N", every
// slice to two filled elements and every pointer to a filled value, down to
// depth levels of pointers (a JSONDiff holds Attributes, which hold
// JSONDiffs).
func fill(v reflect.Value, n *int, depth int) {
	switch v.Kind() {
	case reflect.String:
		*n++
		v.SetString("secret-" + strconv.Itoa(*n))
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n, depth)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n, depth)
		}
	case reflect.Pointer:
		if depth > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), n, depth-1)
		}
	}
}

// strs calls fn with the path and value of every string reachable from v.
func strs(v reflect.Value, path string, fn func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		fn(path, v.String())
	case reflect.Struct:
		for i := range v.NumField() {
			strs(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			strs(v.Index(i), path+"[]", fn)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			strs(v.Elem(), path, fn)
		}
	}
}

func TestMaskReachesEveryStringOfTheChangeSet(t *testing.T) {
	var cs ChangeSet
	n := 0
	fill(reflect.ValueOf(&cs).Elem(), &n, 2)
	if n < 40 {
		t.Fatalf("only %d strings filled", n)
	}
	seen := 0
	cs.Mask(func(s string) string {
		seen++
		if !strings.HasPrefix(s, "secret-") {
			t.Errorf("Mask gave m %q, not a string of the change set", s)
		}
		return "***"
	})
	strs(reflect.ValueOf(cs), "ChangeSet", func(path, s string) {
		if s != "***" {
			t.Errorf("%s is %q after Mask", path, s)
		}
	})
	if seen != n {
		t.Errorf("m called %d times for %d strings", seen, n)
	}
}

func TestMaskingARealChangeSetMasksAddressesAndValues(t *testing.T) {
	cs := committedChangeSet(t, "moved")
	cs.Mask(func(s string) string { return strings.ReplaceAll(s, "move", "****") })
	r := cs.Resources[0]
	if r.Address != "terraform_data.****d_and_changed" || r.PreviousAddress != "terraform_data.renamed_and_changed" {
		t.Errorf("addresses %q, %q", r.Address, r.PreviousAddress)
	}
	if a := attributeAt(t, r, "input"); a.After != `"after the ****"` {
		t.Errorf("input after %q", a.After)
	}
}
