package config

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/switchtender/switchtender/exec"
)

// checkCommand is the lexical half of DESIGN.md invariant 4 and the spec's
// "The command directory cannot escape the project with ..": the same check
// exec.ResolveWorkingDir makes before every run (exec.CheckCommand). It
// returns the cleaned command, or a problem sentence.
func checkCommand(cmd string) (string, string) {
	if err := exec.CheckCommand(cmd); err != nil {
		return "", err.Error()
	}
	return path.Clean(strings.ReplaceAll(cmd, `\`, "/")), ""
}

func (p *parser) template(b *hcl.Block, name string) *Template {
	c := p.content(b, templateSchema)
	t := &Template{Name: name, Tool: DefaultTool, Queue: DefaultQueue, Line: p.line(b.DefRange)}
	refs := &templateRefs{}
	good := p.templateWorkdir(c, t, refs)
	good = p.templateRunner(c, t, refs) && good
	good = p.templateCredentials(c, t, refs) && good
	good = p.templateVars(c, t) && good
	good = p.templateSchedule(c, t) && good
	good = p.templatePullRequests(c, t, refs) && good
	good = p.surveys(c, t) && good
	if !good {
		return nil
	}
	p.tmplRefs[t] = refs
	return t
}

// templateSchedule reads check_every or check_cron (not both): when the
// server launches drift checks of the template on its own.
func (p *parser) templateSchedule(c *hcl.BodyContent, t *Template) bool {
	good := true
	every, ea, ok := p.duration(c, "check_every")
	if ok {
		t.CheckEvery = every
	} else if ea != nil {
		good = false
	}
	v, ca, ok := p.str(c, "check_cron")
	if ok {
		cron, err := ParseCron(v)
		if err != nil {
			p.errorf(ca.Expr.Range(), "Invalid check_cron", "template %q: %v", t.Name, err)
			good = false
		}
		t.CheckCron = cron
	} else if ca != nil {
		good = false
	}
	if ea != nil && ca != nil {
		p.errorf(ca.NameRange, "Two schedules", "template %q sets both check_every (%s) and check_cron; keep one of them", t.Name, p.line(ea.NameRange))
		good = false
	}
	return good
}

// templateWorkdir reads project and command (both required).
func (p *parser) templateWorkdir(c *hcl.BodyContent, t *Template, refs *templateRefs) bool {
	good := true
	if v, a, ok := p.str(c, "project"); ok {
		t.Project = v
		refs.project = ref{v, a.Expr.Range()}
	} else {
		good = false
	}
	if v, a, ok := p.str(c, "command"); ok {
		clean, problem := checkCommand(v)
		if problem != "" {
			p.errorf(a.Expr.Range(), "Invalid command", "template %q: %s", t.Name, problem)
			good = false
		}
		t.Command = clean
	} else {
		good = false
	}
	return good
}

// templateRunner reads tool and queue.
func (p *parser) templateRunner(c *hcl.BodyContent, t *Template, refs *templateRefs) bool {
	good := true
	if v, a, ok := p.str(c, "tool"); ok {
		if v != ToolOpenTofu && v != ToolTerraform {
			p.errorf(a.Expr.Range(), "Unknown tool", "tool = %q; write \"opentofu\" or \"terraform\", the binary the configuration is written for", v)
			good = false
		}
		t.Tool = v
	} else if a != nil {
		good = false
	}
	if v, a, ok := p.str(c, "queue"); ok {
		t.Queue = v
		refs.queue = ref{v, a.Expr.Range()}
	} else if a != nil {
		good = false
	}
	return good
}

func (p *parser) templateCredentials(c *hcl.BodyContent, t *Template, refs *templateRefs) bool {
	rs, a, ok := p.strList(c, "credentials")
	if !ok {
		return a == nil
	}
	t.Credentials = names(rs)
	refs.credentials = rs
	p.noDuplicates(rs, "credentials")
	return true
}

func (p *parser) templateVars(c *hcl.BodyContent, t *Template) bool {
	a, ok := c.Attributes["vars"]
	if !ok {
		return true
	}
	v, ok := p.value(a)
	if !ok {
		return false
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		p.errorf(a.Expr.Range(), "Wrong type", "vars wants an object like { environment = \"prod\" }, got %s", v.Type().FriendlyName())
		return false
	}
	var good bool
	t.Vars, good = p.varsMap(a, v)
	return good
}

// varsMap converts the vars object, leaving out (and reporting) each entry
// that is not a variable name or not a value a run can take.
func (p *parser) varsMap(a *hcl.Attribute, v cty.Value) (map[string]any, bool) {
	out := map[string]any{}
	good := true
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		key := k.AsString()
		if !hclsyntax.ValidIdentifier(key) {
			p.errorf(a.Expr.Range(), "Invalid variable name",
				"vars key %q is not a variable name (it arrives as TF_VAR_%s); use letters, digits, '_' and '-', starting with a letter", key, key)
			good = false
			continue
		}
		gv, err := toGo(ev, "vars."+key)
		if err != nil {
			p.errorf(a.Expr.Range(), "Invalid variable value", "%v", err)
			good = false
			continue
		}
		out[key] = gv
	}
	return out, good
}

// surveys reads the template's survey blocks in file order.
func (p *parser) surveys(c *hcl.BodyContent, t *Template) bool {
	good := true
	seen := map[string]hcl.Range{}
	for _, sb := range c.Blocks {
		f := p.survey(sb)
		if f == nil {
			good = false
			continue
		}
		if prev, ok := seen[f.Name]; ok {
			p.errorf(sb.LabelRanges[0], "Duplicate survey field",
				"survey field %q is already declared at %s; remove one", f.Name, p.line(prev))
			good = false
			continue
		}
		seen[f.Name] = sb.DefRange
		if _, ok := t.Vars[f.Name]; ok {
			p.errorf(sb.LabelRanges[0], "Survey field shadows a var",
				"template %q sets %q both in vars and as a survey field; keep one (a survey field's default takes the place of the var)", t.Name, f.Name)
			good = false
			continue
		}
		t.Survey = append(t.Survey, f)
	}
	return good
}

var surveyTypes = []string{TypeString, TypeNumber, TypeBool, TypeList, TypeMap, TypeChoice}

func (p *parser) survey(b *hcl.Block) *SurveyField {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		p.errorf(b.LabelRanges[0], "Invalid survey field name",
			"survey field %q is not a variable name (it arrives as TF_VAR_%s); use letters, digits, '_' and '-', starting with a letter", name, name)
		return nil
	}
	c := p.content(b, surveySchema)
	f := &SurveyField{Name: name, Type: TypeString, Line: p.line(b.DefRange)}
	if !p.surveyType(c, f) {
		return nil
	}
	good := p.surveyChoices(b, c, f)
	if v, _, ok := p.str(c, "description"); ok {
		f.Description = v
	}
	if v, ok := p.boolean(c, "sensitive"); ok {
		f.Sensitive = v
	}
	good = p.surveyDefault(c, f) && good
	f.Required = f.Default == nil
	if !good {
		return nil
	}
	return f
}

// surveyType reads type; false means the field is dropped at once.
func (p *parser) surveyType(c *hcl.BodyContent, f *SurveyField) bool {
	v, a, ok := p.str(c, "type")
	if !ok {
		return a == nil
	}
	if !slices.Contains(surveyTypes, v) {
		p.errorf(a.Expr.Range(), "Unknown survey type",
			"survey field %q has type = %q; use one of %s", f.Name, v, strings.Join(surveyTypes, ", "))
		return false
	}
	f.Type = v
	return true
}

// surveyChoices reads choices, which a choice field needs and no other has.
func (p *parser) surveyChoices(b *hcl.Block, c *hcl.BodyContent, f *SurveyField) bool {
	rs, a, ok := p.strList(c, "choices")
	switch {
	case a == nil && f.Type == TypeChoice:
		p.errorf(b.DefRange, "Missing choices",
			"survey field %q has type \"choice\" but no choices; add choices = [\"a\", \"b\"]", f.Name)
		return false
	case a == nil:
		return true
	case !ok:
		return false
	case f.Type != TypeChoice:
		p.errorf(a.Expr.Range(), "Unexpected choices",
			"survey field %q has choices but type %q; set type = \"choice\" or remove choices", f.Name, f.Type)
		return false
	case len(rs) == 0:
		p.errorf(a.Expr.Range(), "Empty choices", "survey field %q has no choices; list the allowed answers", f.Name)
		return false
	}
	f.Choices = names(rs)
	return p.noDuplicates(rs, "choices")
}

func (p *parser) surveyDefault(c *hcl.BodyContent, f *SurveyField) bool {
	a, ok := c.Attributes["default"]
	if !ok {
		return true
	}
	v, ok := p.value(a)
	if !ok {
		return true
	}
	d, problem := defaultFor(f, v)
	if problem != "" {
		p.errorf(a.Expr.Range(), "Wrong default", "%s", problem)
		return false
	}
	f.Default = d
	return true
}

// defaultFor converts a survey default, which must have the field's type.
func defaultFor(f *SurveyField, v cty.Value) (any, string) {
	t := v.Type()
	var ok bool
	switch f.Type {
	case TypeString, TypeChoice:
		ok = t == cty.String
	case TypeNumber:
		ok = t == cty.Number
	case TypeBool:
		ok = t == cty.Bool
	case TypeList:
		ok = t.IsListType() || t.IsTupleType() || t.IsSetType()
	case TypeMap:
		ok = t.IsMapType() || t.IsObjectType()
	}
	if !ok {
		return nil, fmt.Sprintf("survey field %q has type %q but its default is %s; give a %s default or change the type",
			f.Name, f.Type, t.FriendlyName(), f.Type)
	}
	g, err := toGo(v, fmt.Sprintf("survey field %q default", f.Name))
	if err != nil {
		return nil, err.Error()
	}
	if f.Type == TypeChoice {
		s := g.(string)
		for _, c := range f.Choices {
			if c == s {
				return g, ""
			}
		}
		if f.Sensitive {
			return nil, fmt.Sprintf("survey field %q default is not one of its choices %s (it is sensitive, so it is not repeated here); add it to choices or pick one of them",
				f.Name, quoteList(f.Choices))
		}
		return nil, fmt.Sprintf("survey field %q default %q is not one of its choices %s; add it to choices or pick one of them",
			f.Name, s, quoteList(f.Choices))
	}
	return g, ""
}
