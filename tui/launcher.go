package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Launcher messages.
type (
	templatesMsg struct {
		gen  int
		list []Template
		err  error
	}
	// launchedMsg is the answer to a submitted form: the server's check
	// refused it (checked), or the launch started run id or was refused.
	launchedMsg struct {
		gen     int
		id      string
		err     error
		checked bool // err came from CheckLaunch; nothing was launched
	}
)

func (templatesMsg) target() screenID { return screenLauncher }
func (launchedMsg) target() screenID  { return screenLauncher }

const (
	stepPick = iota
	stepForm
	stepBusy
)

// runKinds are the launch choices, the safe one first. A drift check plans
// and, when it finds drift, keeps the plan for a reconcile.
var runKinds = []struct{ kind, label string }{
	{"plan", "dry run (plan only)"},
	{"apply", "real run (apply)"},
	{"check", "drift check (plan, kept for a reconcile)"},
}

// formField is one survey prompt. A choice or bool field has choices and
// no value until one is chosen (choice -1), unless it has a default; a
// text field has a value once the user typed or it has a default.
type formField struct {
	f       Field
	in      textinput.Model
	choices []string // non-nil for choice and bool fields
	choice  int      // index into choices, -1 while none is chosen
	touched bool     // the user edited the text input
	err     string
}

// value is the field's answer and whether it has one to send.
func (f *formField) value() (string, bool) {
	if f.choices != nil {
		if f.choice < 0 {
			return "", false
		}
		return f.choices[f.choice], true
	}
	return f.in.Value(), f.touched || f.f.HasDefault
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
		return l.onLaunched(msg)
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

// onLaunched opens the launched run, or goes back to the form with the
// refusal: at its field when it is about one, under the form otherwise. A
// form the check passed is launched.
func (l *launcher) onLaunched(msg launchedMsg) tea.Cmd {
	if msg.gen != l.gen {
		return nil
	}
	if msg.err == nil && msg.checked {
		return l.launch()
	}
	if msg.err == nil {
		id := msg.id
		return func() tea.Msg { return openRunMsg{id: id} }
	}
	l.step = stepForm
	var fe *FieldError
	if errors.As(msg.err, &fe) {
		if i := l.fieldIndex(fe.Field); i >= 0 {
			l.fields[i].err = cleanLine(fe.Message)
			l.focus = i
			l.formErr = "launch refused: " + cleanLine(fe.Field) + " needs fixing"
			return l.refocus()
		}
	}
	l.formErr = "launch refused: " + cleanLine(msg.err.Error())
	return nil
}

func (l *launcher) fieldIndex(name string) int {
	return slices.IndexFunc(l.fields, func(f *formField) bool { return f.f.Name == name })
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
		l.fields = append(l.fields, l.newField(fd))
	}
	return l.refocus()
}

// newField is the prompt for fd: a choice or bool field starts on its
// default, or unselected without one; a text field starts with its default,
// or empty.
func (l *launcher) newField(fd Field) *formField {
	f := &formField{f: fd, choice: -1}
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
		return f
	}
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
	return f
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

// check runs the server's validation of field i's answer, if it has one,
// and keeps its verdict at the field; it reports whether the answer is
// good. A field without an answer is left to CheckLaunch.
func (l *launcher) check(i int) bool {
	f := l.fields[i]
	v, given := f.value()
	if !given {
		return true
	}
	if err := l.b.CheckAnswer(l.tmpl.Name, f.f.Name, v); err != nil {
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
	switch msg.String() {
	case "esc":
		l.step = stepPick
		l.fields = nil
		return nil
	case "tab", "down":
		return l.move(1)
	case "shift+tab", "up":
		return l.move(-1)
	case "enter":
		if l.focus == len(l.fields)+1 {
			return l.submit()
		}
		return l.move(1)
	case "left":
		if l.cycle(-1) {
			return nil
		}
	case "right":
		if l.cycle(1) {
			return nil
		}
	}
	return l.typeKey(msg)
}

// cycle moves the choice under the focus by d (an unselected field starts
// at the first or last choice); it reports whether the focus was on one.
func (l *launcher) cycle(d int) bool {
	if l.focus == len(l.fields) {
		l.kind = (l.kind + d + len(runKinds)) % len(runKinds)
		return true
	}
	if l.focus > len(l.fields) || l.fields[l.focus].choices == nil {
		return false
	}
	f := l.fields[l.focus]
	n := len(f.choices)
	if f.choice < 0 && d < 0 {
		f.choice = n - 1
	} else {
		f.choice = (f.choice + d + n) % n
	}
	f.err = ""
	return true
}

// typeKey gives a key to the text input under the focus.
func (l *launcher) typeKey(msg tea.KeyPressMsg) tea.Cmd {
	if l.focus >= len(l.fields) || l.fields[l.focus].choices != nil {
		return nil
	}
	f := l.fields[l.focus]
	before := f.in.Value()
	var cmd tea.Cmd
	f.in, cmd = f.in.Update(msg)
	if f.in.Value() != before {
		f.err = ""
		f.touched = true
	}
	return cmd
}

// request is the launch the form asks for: only the answers given.
func (l *launcher) request() LaunchRequest {
	req := LaunchRequest{Template: l.tmpl.Name, Kind: runKinds[l.kind].kind, Answers: map[string]string{}}
	for _, f := range l.fields {
		if v, given := f.value(); given {
			req.Answers[f.f.Name] = v
		}
	}
	return req
}

// submit checks every answer given with the server's validation of one
// answer, then the whole launch with the server's own launch check
// (CheckLaunch, as the SSH launch command), and launches only when both
// pass; otherwise the focus goes to the first bad answer.
func (l *launcher) submit() tea.Cmd {
	bad, n := -1, 0
	for i := range l.fields {
		if !l.check(i) {
			n++
			if bad < 0 {
				bad = i
			}
		}
	}
	if bad >= 0 {
		l.focus = bad
		l.formErr = fmt.Sprintf("%d answer(s) need fixing before launch", n)
		return l.refocus()
	}
	l.step = stepBusy
	l.formErr = ""
	b, ctx, gen, req := l.b, l.ctx, l.gen, l.request()
	return func() tea.Msg {
		return launchedMsg{gen: gen, checked: true, err: b.CheckLaunch(ctx, req)}
	}
}

// launch starts the run the form asks for.
func (l *launcher) launch() tea.Cmd {
	b, ctx, gen, req := l.b, l.ctx, l.gen, l.request()
	return func() tea.Msg {
		id, err := b.Launch(ctx, req)
		return launchedMsg{gen: gen, id: id, err: err}
	}
}

// allKeys is every key of the launcher's current step, for the full help.
func (l *launcher) allKeys() bindings { return l.keys() }

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
	if l.step == stepPick {
		return l.pickView()
	}
	return l.formView()
}

func (l *launcher) pickView() string {
	st := l.st
	var b strings.Builder
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
		line := trunc(pad(cleanLine(t.Name), 18)+" "+desc, l.width-2)
		if i == l.cursor {
			b.WriteString("> " + st.selected.Render(line) + "\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
		avail--
	}
	b.WriteString(strings.Repeat("\n", max(0, avail)))
	b.WriteString("\n" + l.help.View(l.keys()))
	return b.String()
}

func (l *launcher) formView() string {
	st := l.st
	t := l.tmpl
	var b strings.Builder
	b.WriteString(st.title.Render("Launch · "+cleanLine(t.Name)) + "  " +
		st.faint.Render(trunc(cleanLine(t.Project)+" · "+cleanLine(t.Command)+" ("+cleanLine(t.Tool)+")", max(0, l.width-12-len(t.Name)))) + "\n\n")
	lines, focusFrom, focusTo := l.formLines()

	// Window the form so the focused block is visible.
	avail := max(1, l.h-5)
	start := 0
	if len(lines) > avail {
		start = max(0, focusTo-avail)
		start = min(start, focusFrom)
	}
	shown := lines[start:min(len(lines), start+avail)]
	b.WriteString(strings.Join(shown, "\n") + "\n")
	b.WriteString(strings.Repeat("\n", max(0, avail-len(shown))))
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

// formLines are the form's lines (fields, run kind, launch button) and the
// range [from, to) of the focused block.
func (l *launcher) formLines() (lines []string, from, to int) {
	st := l.st
	for i, f := range l.fields {
		start := len(lines)
		lines = append(lines, l.fieldLines(f, i == l.focus)...)
		if i == l.focus {
			from, to = start, len(lines)
		}
	}
	mark := "  "
	if l.focus == len(l.fields) {
		mark = "▸ "
		from, to = len(lines), len(lines)+1
	}
	lines = append(lines, mark+st.label.Render("run as")+"  ‹ "+runKinds[l.kind].label+" ›")
	mark, button := "  ", "[ launch ]"
	if l.focus == len(l.fields)+1 {
		mark, button = "▸ ", st.selected.Render(button)
		from, to = len(lines), len(lines)+1
	}
	lines = append(lines, mark+button)
	return lines, from, to
}

// fieldLines are one field's head (name, type, "required" when it has no
// default, description), its input and its error.
func (l *launcher) fieldLines(f *formField, focused bool) []string {
	st := l.st
	mark := "  "
	if focused {
		mark = "▸ "
	}
	label := cleanLine(f.f.Name)
	kind := cleanLine(f.f.Type)
	if f.f.Sensitive {
		kind += ", sensitive"
	}
	if !f.f.HasDefault {
		kind += ", required"
	}
	head := mark + st.label.Render(label) + " (" + kind + ")"
	if f.f.Description != "" {
		head += "  " + st.faint.Render(trunc(cleanLine(f.f.Description), max(0, l.width-lenPlain(label, kind)-8)))
	}
	lines := []string{head}
	switch {
	case f.choices != nil && f.choice < 0:
		lines = append(lines, fmt.Sprintf("    ‹ %s ›  %d choices", st.faint.Render("no value: ←/→ to choose"), len(f.choices)))
	case f.choices != nil:
		lines = append(lines, fmt.Sprintf("    ‹ %s ›  %d/%d", cleanLine(f.choices[f.choice]), f.choice+1, len(f.choices)))
	default:
		lines = append(lines, "  "+f.in.View())
	}
	if f.err != "" {
		// The whole sentence, wrapped: the part that says what to do is
		// often at its end.
		for i, line := range strings.Split(ansi.Wrap(cleanLine(f.err), max(20, l.width-6), ""), "\n") {
			prefix := "      "
			if i == 0 {
				prefix = "    ✗ "
			}
			lines = append(lines, st.err.Render(trunc(prefix+line, l.width)))
		}
	}
	return lines
}

func lenPlain(parts ...string) int {
	n := 0
	for _, p := range parts {
		n += len([]rune(p))
	}
	return n
}
