package scan

import "strings"

// ModuleKey returns the key OpenTofu's module manifest (modules.json) and a
// plan's configuration snapshot give the module at the call path names: ""
// for the root module, else the call names joined by "." ("a.b" for
// module.a.module.b). It follows Manifest.ModuleKey in OpenTofu's
// internal/modsdir/manifest.go.
func ModuleKey(path []string) string {
	return strings.Join(path, ".")
}

// ModuleAddress returns the address of the module at the call path names:
// "" for the root module, "module.a.module.b" for the path [a b].
func ModuleAddress(path []string) string {
	var b strings.Builder
	for i, name := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString("module.")
		b.WriteString(name)
	}
	return b.String()
}

// Address returns the address of the object local within the module at the
// call path names: Address([a b], "data.external.x") is
// "module.a.module.b.data.external.x"; in the root module it is local as is.
func Address(path []string, local string) string {
	m := ModuleAddress(path)
	if m == "" {
		return local
	}
	if local == "" {
		return m
	}
	return m + "." + local
}
