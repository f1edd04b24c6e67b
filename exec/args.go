package exec

// The argument lists of a run's steps (spec "What runs": every step runs with
// -input=false -no-color, so a run never blocks on a prompt). Each call
// returns a new slice.

// InitArgs returns init's arguments. With getModules false it adds
// -get=false, for a run whose modules the gate installed and read (spec
// "What a plan runs, and what the gate reads": tofu init runs with
// -get=false, so it resolves no version again).
func InitArgs(getModules bool) []string {
	a := []string{"init", "-input=false", "-no-color"}
	if !getModules {
		a = append(a, "-get=false")
	}
	return a
}

// GetArgs returns the arguments of the module download the configuration
// scan runs in its private copy (spec "What a plan runs, and what the gate
// reads": tofu get installs modules only, no provider, and runs nothing the
// configuration names).
func GetArgs() []string {
	return []string{"get", "-no-color"}
}

// PlanArgs returns the arguments of a plan that saves its plan file at
// planFile (a path in the run's private directory).
func PlanArgs(planFile string) []string {
	return []string{"plan", "-input=false", "-no-color", "-out=" + planFile}
}

// CheckArgs returns the arguments of a drift check's plan, which saves its
// plan file at planFile and exits 0 when nothing would change, 2 when
// something would, and 1 on an error (-detailed-exitcode).
func CheckArgs(planFile string) []string {
	return []string{"plan", "-detailed-exitcode", "-input=false", "-no-color", "-out=" + planFile}
}

// ApplyAutoArgs returns the arguments of an apply no rule covers: it plans
// and applies in one step.
func ApplyAutoArgs() []string {
	return []string{"apply", "-auto-approve", "-input=false", "-no-color"}
}

// ApplyPlanArgs returns the arguments of an apply that carries out exactly
// the saved plan at planFile (an approved plan needs no -auto-approve).
func ApplyPlanArgs(planFile string) []string {
	return []string{"apply", "-input=false", "-no-color", planFile}
}

// ShowJSONArgs returns the arguments rendering the saved plan at planFile as
// JSON for the gate. Its output holds sensitive values in clear text: run it
// with Capture, never with its stdout logged.
func ShowJSONArgs(planFile string) []string {
	return []string{"show", "-json", "-no-color", planFile}
}

// StatePullArgs returns the arguments reading the working directory's
// current state through its backend (for the basis check and the state's
// sensitive values). Its stdout is the state, sensitive values in clear
// text: run it with Capture, never with its stdout logged.
func StatePullArgs() []string {
	return []string{"state", "pull", "-no-color"}
}
