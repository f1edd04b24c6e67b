package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// Launcher messages.
type (
	templatesMsg struct {
		gen  int
		list []Template
		err  error
	}
	launchedMsg struct {
		gen int
		id  string
		err error
	}
)

func (templatesMsg) target() screenID { return screenLauncher }
func (launchedMsg) target() screenID  { return screenLauncher }

const (
	stepPick = iota
	stepForm
	stepBusy
)

// runKinds are the launch choices, the safe one first. (Drift checks join
// them when the server runs them.)
var runKinds = []struct{ kind, label string }{
	{"plan", "dry run (plan only)"},
	{"apply", "real run (apply)"},
}

type formField struct {
	f       Field
	in      textinput.Model
	choices []string // non-nil for choice and bool fields
	choice  int
	err     string
}

func (f *formField) value() string {
	if f.choices != nil {
		return f.choices[f.choice]
	}
	return f.in.Value()
}

// launcher picks a template, asks its survey and launches a run.
type launcher struct {
	env
	gen int
	h   int

	step      int
	templates []Template
	loaded    bool
	loadErr   error
	cursor    int

	tmpl    Template
	fields  []*formField
	focus   int // 0..len(fields)-1 a field, len(fields) the run kind, len(fields)+1 the launch button
	kind    int
	formErr string
	help    help.Model
}

func newLauncher(e env, gen int) *launcher {
	return &launcher{env: e, gen: gen, help: newHelp(e.st)}
}

func (l *launcher) SetSize(w, h int) {
	l.width, l.h = w, h
	l.help.SetWidth(w)
	for _, f := range l.fields {
		f.in.SetWidth(max(10, w-8))
	}
}

// Typing is true on the survey form: q is a letter of an answer there.
func (l *launcher) Typing() bool { return l.step == stepForm }

func (l *launcher) Init() tea.Cmd {
	b, ctx, gen := l.b, l.ctx, l.gen
	return func() tea.Msg {
		list, err := b.Templates(ctx)
		return templatesMsg{gen: gen, list: list, err: err}
	}
}

func (l *launcher) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case templatesMsg:
		if msg.gen != l.gen {
			return nil
		}
		l.loaded, l.loadErr, l.templates = true, msg.err, msg.list
		return nil
	case launchedMsg:
		if msg.gen != l.gen {
			return nil
		}
		if msg.err != nil {
			l.step = stepForm
			l.formErr = "launch refused: " + cleanLine(msg.err.Error())
			return nil
		}
		id := msg.id
		return func() tea.Msg { return openRunMsg{id: id} }
	case tea.KeyPressMsg:
		switch l.step {
		case stepPick:
			return l.pickKey(msg)
		case stepForm:
			return l.formKey(msg)
		}
		return nil
	}
	if l.step == stepForm && l.focus < len(l.fields) {
		f := l.fields[l.focus]
		var cmd tea.Cmd
		f.in, cmd = f.in.Update(msg)
		return cmd
	}
	return nil
}

func (l *launcher) pickKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keyBack):
		return func() tea.Msg { return backMsg{} }
	case key.Matches(msg, keyUp):
		l.cursor = max(0, l.cursor-1)
	case key.Matches(msg, keyDown):
		l.cursor = min(max(0, len(l.templates)-1), l.cursor+1)
	case key.Matches(msg, keySelect):
		if l.cursor < len(l.templates) {
			return l.openForm(l.templates[l.cursor])
		}
	}
	return nil
}

func (l *launcher) openForm(t Template) tea.Cmd {
	l.tmpl = t
	l.step = stepForm
	l.fields = nil
	l.focus = 0
	l.kind = 0
	l.formErr = ""
	for _, fd := range t.Survey {
		f := &formField{f: fd}
		switch {
		case len(fd.Choices) > 0:
			f.choices = fd.Choices
		case fd.Type == "bool":
			f.choices = []string{"true", "false"}
		}
		if f.choices != nil {
			if i := slices.Index(f.choices, fd.Default); fd.HasDefault && i >= 0 {
				f.choice = i
			}
		} else {
			f.in = textinput.New()
			f.in.Prompt = "  "
			f.in.SetWidth(max(10, l.width-8))
			if l.st.noColor {
				f.in.SetStyles(textinput.Styles{Cursor: textinput.CursorStyle{Blink: true}})
			}
			if fd.Sensitive {
				f.in.EchoMode = textinput.EchoPassword
			}
			if fd.HasDefault {
				f.in.SetValue(fd.Default)
			}
			f.in.Placeholder = "enter a " + cleanLine(fd.Type) + " value"
		}
		l.fields = append(l.fields, f)
	}
	return l.refocus()
}

// refocus gives the text input under the focus the cursor.
func (l *launcher) refocus() tea.Cmd {
	var cmd tea.Cmd
	for i, f := range l.fields {
		if f.choices != nil {
			continue
		}
		if i == l.focus {
			cmd = f.in.Focus()
		} else {
			f.in.Blur()
		}
	}
	return cmd
}

// check runs the server's validation of one field and keeps its verdict at
// the field; it reports whether the answer is good.
func (l *launcher) check(i int) bool {
	f := l.fields[i]
	if err := l.b.CheckAnswer(l.tmpl.Name, f.f.Name, f.value()); err != nil {
		f.err = cleanLine(err.Error())
		return false
	}
	f.err = ""
	return true
}

func (l *launcher) move(delta int) tea.Cmd {
	if l.focus < len(l.fields) {
		l.check(l.focus)
	}
	n := len(l.fields) + 2
	l.focus = (l.focus + delta + n) % n
	return l.refocus()
}

func (l *launcher) formKey(msg tea.KeyPressMsg) tea.Cmd {
	onField := l.focus < len(l.fields)
	switch {
	case key.Matches(msg, keyBack):
		l.step = stepPick
		l.fields = nil
		return nil
	case msg.String() == "tab" || msg.String() == "down":
		return l.move(1)
	case msg.String() == "shift+tab" || msg.String() == "up":
		return l.move(-1)
	case msg.String() == "enter":
		if l.focus == len(l.fields)+1 {
			return l.submit()
		}
		return l.move(1)
	case msg.String() == "left" || msg.String() == "right":
		d := 1
		if msg.String() == "left" {
			d = -1
		}
		if onField && l.fields[l.focus].choices != nil {
			f := l.fields[l.focus]
			f.choice = (f.choice + d + len(f.choices)) % len(f.choices)
			f.err = ""
			return nil
		}
		if l.focus == len(l.fields) {
			l.kind = (l.kind + d + len(runKinds)) % len(runKinds)
			return nil
		}
	}
	if onField && l.fields[l.focus].choices == nil {
		f := l.fields[l.focus]
		before := f.in.Value()
		var cmd tea.Cmd
		f.in, cmd = f.in.Update(msg)
		if f.in.Value() != before {
			f.err = ""
		}
		return cmd
	}
	return nil
}

// submit checks every answer with the server's validation and launches only
// when all pass; otherwise the focus goes to the first bad answer.
func (l *launcher) submit() tea.Cmd {
	bad := -1
	for i := range l.fields {
		if !l.check(i) && bad < 0 {
			bad = i
		}
	}
	if bad >= 0 {
		l.focus = bad
		n := 0
		for _, f := range l.fields {
			if f.err != "" {
				n++
			}
		}
		l.formErr = fmt.Sprintf("%d answer(s) need fixing before launch", n)
		return l.refocus()
	}
	req := LaunchRequest{Template: l.tmpl.Name, Kind: runKinds[l.kind].kind, Answers: map[string]string{}}
	for _, f := range l.fields {
		req.Answers[f.f.Name] = f.value()
	}
	l.step = stepBusy
	l.formErr = ""
	b, ctx, gen := l.b, l.ctx, l.gen
	return func() tea.Msg {
		id, err := b.Launch(ctx, req)
		return launchedMsg{gen: gen, id: id, err: err}
	}
}

func (l *launcher) keys() bindings {
	switch l.step {
	case stepPick:
		return bindings{keyUp, keyDown, keySelect, keyBack, keyQuit}
	case stepForm:
		b := bindings{keyNext, keyPrev}
		if l.focus == len(l.fields) || (l.focus < len(l.fields) && l.fields[l.focus].choices != nil) {
			b = append(b, keyCycle)
		}
		if l.focus == len(l.fields)+1 {
			b = append(b, key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "launch")))
		}
		return append(b, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "templates")), keyCtrlC)
	}
	return bindings{keyCtrlC}
}

func (l *launcher) View() string {
	st := l.st
	var b strings.Builder
	switch l.step {
	case stepPick:
		b.WriteString(st.title.Render("Switchtender · launch a run") + "\n\n")
		avail := l.h - 4
		switch {
		case !l.loaded:
			b.WriteString("loading templates…\n")
			avail--
		case l.loadErr != nil:
			b.WriteString(st.err.Render("! could not list templates: "+cleanLine(l.loadErr.Error())) + "\n")
			avail--
		case len(l.templates) == 0:
			b.WriteString("no templates you may launch\n")
			avail--
		}
		start := max(0, l.cursor-avail+1)
		for i := start; i < len(l.templates) && i < start+avail; i++ {
			t := l.templates[i]
			desc := fmt.Sprintf("%s · %s (%s) · %d prompt(s)", cleanLine(t.Project), cleanLine(t.Command), cleanLine(t.Tool), len(t.Survey))
			line := pad(cleanLine(t.Name), 18) + " " + desc
			if i == l.cursor {
				b.WriteString("> " + st.selected.Render(trunc(line, l.width-2)) + "\n")
			} else {
				b.WriteString("  " + trunc(line, l.width-2) + "\n")
			}
			avail--
		}
		for ; avail > 0; avail-- {
			b.WriteString("\n")
		}
		b.WriteString("\n" + l.help.View(l.keys()))
		return b.String()
	}

	t := l.tmpl
	b.WriteString(st.title.Render("Launch · "+cleanLine(t.Name)) + "  " +
		st.faint.Render(trunc(cleanLine(t.Project)+" · "+cleanLine(t.Command)+" ("+cleanLine(t.Tool)+")", max(0, l.width-12-len(t.Name)))) + "\n\n")

	var lines []string
	focusFrom, focusTo := 0, 0
	for i, f := range l.fields {
		from := len(lines)
		mark := "  "
		if i == l.focus {
			mark = "▸ "
		}
		label := cleanLine(f.f.Name)
		kind := cleanLine(f.f.Type)
		if f.f.Sensitive {
			kind += ", sensitive"
		}
		head := mark + st.label.Render(label) + " (" + kind + ")"
		if f.f.Description != "" {
			head += "  " + st.faint.Render(trunc(cleanLine(f.f.Description), max(0, l.width-lenPlain(label, kind)-8)))
		}
		lines = append(lines, head)
		if f.choices != nil {
			lines = append(lines, fmt.Sprintf("    ‹ %s ›  %d/%d", cleanLine(f.choices[f.choice]), f.choice+1, len(f.choices)))
		} else {
			lines = append(lines, "  "+f.in.View())
		}
		if f.err != "" {
			lines = append(lines, st.err.Render(trunc("    ✗ "+f.err, l.width)))
		}
		if i == l.focus {
			focusFrom, focusTo = from, len(lines)
		}
	}
	mark := "  "
	if l.focus == len(l.fields) {
		mark = "▸ "
		focusFrom = len(lines)
	}
	lines = append(lines, mark+st.label.Render("run as")+"  ‹ "+runKinds[l.kind].label+" ›")
	if l.focus == len(l.fields) {
		focusTo = len(lines)
	}
	mark = "  "
	button := "[ launch ]"
	if l.focus == len(l.fields)+1 {
		mark = "▸ "
		button = st.selected.Render(button)
		focusFrom = len(lines)
	}
	lines = append(lines, mark+button)
	if l.focus == len(l.fields)+1 {
		focusTo = len(lines)
	}

	// Window the form so the focused block is visible.
	avail := max(1, l.h-5)
	start := 0
	if len(lines) > avail {
		if focusTo > avail {
			start = focusTo - avail
		}
		if focusFrom < start {
			start = focusFrom
		}
	}
	end := min(len(lines), start+avail)
	shown := lines[start:end]
	b.WriteString(strings.Join(shown, "\n") + "\n")
	for i := len(shown); i < avail; i++ {
		b.WriteString("\n")
	}
	switch {
	case l.step == stepBusy:
		b.WriteString("launching…\n")
	case l.formErr != "":
		b.WriteString(st.err.Render(trunc("! "+l.formErr, l.width)) + "\n")
	default:
		b.WriteString("\n")
	}
	b.WriteString(l.help.View(l.keys()))
	return b.String()
}

func lenPlain(parts ...string) int {
	n := 0
	for _, p := range parts {
		n += len([]rune(p))
	}
	return n
}
