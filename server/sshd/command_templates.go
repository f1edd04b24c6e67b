package sshd

import (
	"fmt"
	"io"
	"strings"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"
)

var templatesCommand = command{
	name:    "templates",
	example: `ssh -p 2222 HOST templates --json`,
	usage:   "templates [--json]",
	summary: "list templates and their survey fields",
	help: `Each template with its tool, working directory, project and queue, and
each survey field as the --var that answers it: its type, its default or
"required", its choices, and whether it is sensitive (a sensitive
default is never shown).`,
	json: true,
	bind: noFlags((*call).templates),
}

// templateView is a template as `templates` shows it.
type templateView struct {
	Name    string      `json:"name"`
	Project string      `json:"project"`
	Tool    string      `json:"tool"`
	Command string      `json:"command"`
	Queue   string      `json:"queue"`
	Survey  []fieldView `json:"survey"`
}

// fieldView is a survey field as `templates` shows it; a sensitive field's
// default is left out.
type fieldView struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Default     any      `json:"default,omitempty"`
	Required    bool     `json:"required"`
	Choices     []string `json:"choices,omitempty"`
	Sensitive   bool     `json:"sensitive"`
	Description string   `json:"description,omitempty"`
}

// templates lists templates with their survey fields.
func (c *call) templates() int {
	list := []templateView{}
	for _, t := range api.SortedTemplates(c.s.Config()) {
		v := templateView{Name: t.Name, Project: t.Project, Tool: t.Tool, Command: t.Command, Queue: t.Queue, Survey: []fieldView{}}
		for _, f := range t.Survey {
			fv := fieldView{Name: f.Name, Type: f.Type, Required: f.Required, Choices: f.Choices, Sensitive: f.Sensitive, Description: f.Description}
			if !f.Sensitive {
				fv.Default = f.Default
			}
			v.Survey = append(v.Survey, fv)
		}
		list = append(list, v)
	}
	if c.json {
		return writeJSON(c.out, list)
	}
	for _, t := range list {
		fmt.Fprintf(c.out, "%s\t%s %s in project %s (queue %s)\n", t.Name, t.Tool, t.Command, t.Project, t.Queue)
		for _, f := range t.Survey {
			writeField(c.out, f)
		}
	}
	return exitOK
}

// writeField writes one survey field as the --var that answers it.
func writeField(w io.Writer, f fieldView) {
	d := "required"
	if !f.Required {
		d = "default " + screentext.Field(api.AnswerText(f.Default))
		if f.Sensitive {
			d = "default (sensitive)"
		}
	}
	if len(f.Choices) > 0 {
		d += "; one of " + strings.Join(f.Choices, ", ")
	}
	if f.Sensitive {
		d += "; sensitive"
	}
	if f.Description != "" {
		d += " — " + screentext.Field(f.Description)
	}
	fmt.Fprintf(w, "  --var %s=<%s>  %s\n", f.Name, f.Type, d)
}
