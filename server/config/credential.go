package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// credentialSources are a credential's sources in the order they are read;
// a credential has exactly one. read reports whether the source is written
// and whether it decoded.
var credentialSources = []struct {
	name string
	read func(p *parser, c *hcl.BodyContent, cred *Credential) (present, good bool)
}{
	{"env", (*parser).credentialEnv},
	{"token", (*parser).credentialToken},
	{"command", (*parser).credentialCommand},
}

func (p *parser) credential(b *hcl.Block, name string) *Credential {
	c := p.content(b, credentialSchema)
	cred := &Credential{Name: name, Line: p.line(b.DefRange)}
	var sources []string
	good := true
	for _, src := range credentialSources {
		present, ok := src.read(p, c, cred)
		if present {
			sources = append(sources, src.name)
		}
		good = good && ok
	}
	if !p.credentialShape(b, c, cred, sources) || !good {
		return nil
	}
	return cred
}

func (p *parser) credentialEnv(c *hcl.BodyContent, cred *Credential) (bool, bool) {
	a, ok := c.Attributes["env"]
	if !ok {
		return false, true
	}
	v, ok := p.value(a)
	if !ok {
		return true, false
	}
	var good bool
	cred.Env, good = p.envMap(a, v)
	return true, good
}

func (p *parser) credentialToken(c *hcl.BodyContent, cred *Credential) (bool, bool) {
	v, a, ok := p.str(c, "token")
	if !ok {
		return a != nil, a == nil
	}
	cred.Token = v
	if v == "" {
		p.errorf(a.Expr.Range(), "Empty token", "credential %q has an empty token; give the token, or remove the credential", cred.Name)
		return true, false
	}
	return true, true
}

func (p *parser) credentialCommand(c *hcl.BodyContent, cred *Credential) (bool, bool) {
	argv, a, ok := p.argv(c, "command", fmt.Sprintf("credential %q", cred.Name), `["vault", "kv", "get", "-field=token", "secret/ci"]`)
	cred.Command = argv
	return a != nil, ok
}

// argv reads a command attribute: a non-empty list of strings whose first
// is the program. owner ("forge \"corp\"") and example name it in messages.
// ok is false when it is written and does not decode; a nil attribute
// means it is not written.
func (p *parser) argv(c *hcl.BodyContent, name, owner, example string) ([]string, *hcl.Attribute, bool) {
	refs, a, ok := p.strList(c, name)
	switch {
	case a == nil:
		return nil, nil, true
	case !ok:
		return nil, a, false
	case len(refs) == 0:
		p.errorf(a.Expr.Range(), "Empty command",
			"%s has an empty %s; give the program and its arguments, like %s", owner, name, example)
		return nil, a, false
	case refs[0].name == "":
		p.errorf(refs[0].rng, "Empty command", "%s %s starts with an empty program name", owner, name)
		return nil, a, false
	}
	return names(refs), a, true
}

// credentialShape reads env_var and checks that the credential has exactly
// one source and that env_var is there with command and only with command.
func (p *parser) credentialShape(b *hcl.Block, c *hcl.BodyContent, cred *Credential, sources []string) bool {
	name := cred.Name
	envVar, eva, hasEnvVar := p.str(c, "env_var")
	switch {
	case len(sources) == 0:
		p.errorf(b.DefRange, "Credential without a source",
			"credential %q needs exactly one of env = { NAME = \"value\" }, token = \"...\" or command = [...] with env_var", name)
		return false
	case len(sources) > 1:
		p.errorf(b.DefRange, "Credential with several sources",
			"credential %q sets %s; keep exactly one of env, token and command, or split it into several credentials", name, strings.Join(sources, " and "))
		return false
	}
	if sources[0] != "command" {
		if eva != nil {
			p.errorf(eva.Expr.Range(), "Unexpected env_var",
				"env_var only goes with command (the variable a command's output is put in); remove it from credential %q", name)
			return false
		}
		return true
	}
	if eva == nil {
		p.errorf(b.DefRange, "Missing env_var",
			"credential %q runs a command but has no env_var; add env_var = \"NAME\", the variable its output is put in", name)
		return false
	}
	if hasEnvVar && !envRE.MatchString(envVar) {
		p.errorf(eva.Expr.Range(), "Invalid env_var",
			"env_var = %q is not an environment variable name; use letters, digits and '_', not starting with a digit", envVar)
		return false
	}
	if !hasEnvVar {
		return false
	}
	cred.EnvVar = envVar
	return true
}

func (p *parser) envMap(a *hcl.Attribute, v cty.Value) (map[string]string, bool) {
	t := v.Type()
	if !t.IsObjectType() && !t.IsMapType() {
		p.errorf(a.Expr.Range(), "Wrong type", "env wants an object like { AWS_ACCESS_KEY_ID = \"...\" }, got %s", t.FriendlyName())
		return nil, false
	}
	out := map[string]string{}
	good := true
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		key := k.AsString()
		if !envRE.MatchString(key) {
			p.errorf(a.Expr.Range(), "Invalid environment variable name",
				"env key %q is not an environment variable name; use letters, digits and '_', not starting with a digit", key)
			good = false
			continue
		}
		if ev.IsNull() || ev.Type() != cty.String {
			p.errorf(a.Expr.Range(), "Wrong type", "env value of %s wants a string in double quotes, got %s", key, ev.Type().FriendlyName())
			good = false
			continue
		}
		out[key] = ev.AsString()
	}
	if len(out) == 0 && good {
		p.errorf(a.Expr.Range(), "Empty env", "env holds no variables; give at least one NAME = \"value\"")
		good = false
	}
	return out, good
}
