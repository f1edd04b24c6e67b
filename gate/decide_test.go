package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// handPlan is a small plan JSON: n deletes of terraform_data.
func handPlan(deletes int, extra ...string) []byte {
	var rcs []string
	for i := range deletes {
		rcs = append(rcs, fmt.Sprintf(`{"address":"terraform_data.r[%d]","mode":"managed","type":"terraform_data","name":"r","index":%d,"change":{"actions":["delete"]}}`, i, i))
	}
	rcs = append(rcs, extra...)
	return []byte(`{"format_version":"1.2","resource_changes":[` + strings.Join(rcs, ",") + `]}`)
}

func intp(n int) *int { return &n }

func mustPolicy(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := CompilePolicy(context.Background(), "inline.rego", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var alice = Request{Template: "network", Project: "infra", Kind: KindApply, Requester: "alice"}

func TestDecide(t *testing.T) {
	denyAll := mustPolicy(t, "package switchtender.plan\n\ndeny contains \"no applies on Fridays\" if true\n")
	holdDeletes := mustPolicy(t, `package switchtender.plan

hold contains msg if {
	some addr in input.summary.by_action.delete
	msg := sprintf("deletes %s", [addr])
}
`)
	byRun := mustPolicy(t, `package switchtender.plan

deny contains msg if {
	input.run.requester_kind == "agent"
	input.run.template == "network"
	msg := sprintf("%s may not apply %s", [input.run.requester, input.run.template])
}
`)
	evalError := mustPolicy(t, "package switchtender.plan\n\ndeny contains msg if { msg := sprintf(\"%d\", [to_number(\"x\")]) }\n")
	slow := compileFile(t, "slow.rego")
	compileErr := errors.New("policies/plan.rego:3: rego_parse_error: unexpected } token")

	agent := alice
	agent.Requester, agent.Agent = "deploy-bot", true
	exemptAgent := agent
	exemptAgent.Exempted = true

	type want struct {
		outcome  Outcome
		holds    []string // reasons, each matched as a substring, in order
		refusals []string
	}
	cases := []struct {
		name  string
		spec  string // the spec sentence the case checks
		req   Request
		plan  []byte
		rules []*Rule
		want  want
	}{
		{
			name: "no rule covers: pass",
			spec: "An apply that no rule covers still runs apply -auto-approve",
			req:  alice, plan: handPlan(3),
			rules: []*Rule{{Name: "other", Templates: []string{"dns"}, MaxDestroy: intp(0)}},
			want:  want{outcome: Pass},
		},
		{
			name: "max_destroy exceeded holds, counted from the plan JSON",
			spec: "The gate measures what the plan destroys from that saved file, rendered with tofu show -json",
			req:  alice, plan: handPlan(3),
			rules: []*Rule{{Name: "few-destroys", MaxDestroy: intp(0), Approvers: []string{"bob"}}},
			want:  want{outcome: Hold, holds: []string{"plan destroys 3 resources; max_destroy is 0 (terraform_data.r[0], terraform_data.r[1], terraform_data.r[2])"}},
		},
		{
			name: "max_destroy at the limit passes; approvers alone do not hold a plan-content rule",
			spec: "the rules decide on that proposal",
			req:  alice, plan: handPlan(2),
			rules: []*Rule{{Name: "few-destroys", MaxDestroy: intp(2), Approvers: []string{"bob"}}},
			want:  want{outcome: Pass},
		},
		{
			name:  "a replace counts as a destroy",
			spec:  "The gate measures what the plan destroys",
			req:   alice,
			plan:  handPlan(0, `{"address":"terraform_data.x","type":"terraform_data","change":{"actions":["create","delete"]}}`),
			rules: []*Rule{{Name: "none", MaxDestroy: intp(0)}},
			want:  want{outcome: Hold, holds: []string{"plan destroys 1 resource; max_destroy is 0"}},
		},
		{
			name: "plan_gate deny refuses",
			spec: "the rules decide on that proposal",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "policy", Policy: denyAll}},
			want:  want{outcome: Refuse, refusals: []string{"no applies on Fridays"}},
		},
		{
			name: "plan_gate hold holds, one reason per message",
			spec: "an apply they hold waits with the plan its approver is shown",
			req:  alice, plan: handPlan(2),
			rules: []*Rule{{Name: "policy", Policy: holdDeletes, Approvers: []string{"carol"}}},
			want:  want{outcome: Hold, holds: []string{"deletes terraform_data.r[0]", "deletes terraform_data.r[1]"}},
		},
		{
			name: "plan_gate sees the run",
			spec: "the rules decide on that proposal",
			req:  exemptAgent, plan: handPlan(0),
			rules: []*Rule{{Name: "policy", Policy: byRun}},
			want:  want{outcome: Refuse, refusals: []string{"deploy-bot may not apply network"}},
		},
		{
			name: "a plan_gate that does not compile holds with its error",
			spec: "DESIGN invariant 5: a policy that does not compile holds the run",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "policy", PolicyErr: compileErr}},
			want:  want{outcome: Hold, holds: []string{"plan_gate does not compile, so the rule holds the apply: policies/plan.rego:3: rego_parse_error"}},
		},
		{
			name: "a plan_gate that errors holds",
			spec: "DESIGN invariant 5: the gate fails closed",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "policy", Policy: evalError}},
			want:  want{outcome: Hold, holds: []string{"plan_gate failed, so the rule holds the apply"}},
		},
		{
			name: "a plan_gate that times out holds",
			spec: "DESIGN invariant 5: the gate fails closed",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "policy", Policy: slow}},
			want:  want{outcome: Hold, holds: []string{"timed out"}},
		},
		{
			name: "a plan that cannot be read holds",
			spec: "DESIGN invariant 5: a plan JSON it cannot read holds the run",
			req:  alice, plan: []byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b","change":{"actions":["obliterate"]}}]}`),
			rules: []*Rule{{Name: "few-destroys", MaxDestroy: intp(5)}, {Name: "policy", Policy: denyAll}},
			want: want{outcome: Hold, holds: []string{
				"the gate cannot read the plan", "max_destroy cannot be checked", "plan_gate inline.rego cannot run"}},
		},
		{
			name: "require_approval rule holds",
			spec: "any approval rule that would hold it",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "prod", Templates: []string{"network"}, RequireApproval: true, Approvers: []string{"alice"}}},
			want:  want{outcome: Hold, holds: []string{"the rule requires approval"}},
		},
		{
			name: "a rule with approvers only holds",
			spec: "any approval rule that would hold it",
			req:  alice, plan: handPlan(0),
			rules: []*Rule{{Name: "approvers", Approvers: []string{"bob"}}},
			want:  want{outcome: Hold, holds: []string{"the rule requires approval"}},
		},
		{
			name: "every reason is reported, refusal wins",
			spec: "the rules decide on that proposal",
			req:  alice, plan: handPlan(1),
			rules: []*Rule{{Name: "few", MaxDestroy: intp(0)}, {Name: "policy", Policy: denyAll}, {Name: "prod", RequireApproval: true}},
			want: want{outcome: Refuse, holds: []string{"plan destroys 1 resource", "the rule requires approval"},
				refusals: []string{"no applies on Fridays"}},
		},
		{
			name: "require_approval submission holds whatever the rules say",
			spec: "An apply whose own submission asks for approval, through require_approval ... waits for a person with the saved plan, whatever the rules say",
			req:  Request{Template: "network", Kind: KindApply, Requester: "alice", RequireApproval: true},
			plan: handPlan(0),
			want: want{outcome: Hold, holds: []string{"the submission asks for approval (require_approval)"}},
		},
		{
			name:  "AI proposal holds whatever the rules say",
			spec:  "An apply whose own submission asks for approval, through ... an AI proposal ... whatever the rules say",
			req:   Request{Template: "network", Kind: KindApply, Requester: "alice", AIProposal: true},
			plan:  handPlan(0),
			rules: []*Rule{{Name: "lenient", MaxDestroy: intp(10)}},
			want:  want{outcome: Hold, holds: []string{"an AI proposed this apply"}},
		},
		{
			name: "an agent's planned apply is held again",
			spec: "Once a person releases it, it plans, and the apply its plan proposes is held again with the saved plan",
			req:  agent, plan: handPlan(0),
			want: want{outcome: Hold, holds: []string{"agent deploy-bot asked for this apply"}},
		},
		{
			name: "an exempted agent takes a person's path: no rule, pass",
			spec: "An apply an exemption covers takes the path above, the way a person's does",
			req:  exemptAgent, plan: handPlan(0),
			want: want{outcome: Pass},
		},
		{
			name: "an exempted agent takes a person's path: rules still hold",
			spec: "An apply an exemption covers takes the path above, the way a person's does",
			req:  exemptAgent, plan: handPlan(1),
			rules: []*Rule{{Name: "few", MaxDestroy: intp(0)}},
			want:  want{outcome: Hold, holds: []string{"plan destroys 1 resource; max_destroy is 0"}},
		},
		{
			name: "exclude_dry_run exempts a dry run",
			spec: "Before it exempts a plan from a rule with exclude_dry_run",
			req:  Request{Template: "network", Kind: KindDryRun, Requester: "alice"}, plan: handPlan(4),
			rules: []*Rule{{Name: "few", MaxDestroy: intp(0), ExcludeDryRun: true}},
			want:  want{outcome: Pass},
		},
		{
			name: "exclude_dry_run does not exempt an apply",
			spec: "Before it exempts a plan from a rule with exclude_dry_run",
			req:  alice, plan: handPlan(4),
			rules: []*Rule{{Name: "few", MaxDestroy: intp(0), ExcludeDryRun: true}},
			want:  want{outcome: Hold, holds: []string{"plan destroys 4 resources"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(context.Background(), c.req, c.plan, nil, c.rules, 300*time.Millisecond)
			if d.Outcome != c.want.outcome {
				t.Errorf("outcome %s, want %s (%s)\nholds %+v\nrefusals %+v", d.Outcome, c.want.outcome, c.spec, d.Holds, d.Refusals)
			}
			checkReasons(t, "holds", d.Holds, c.want.holds)
			checkReasons(t, "refusals", d.Refusals, c.want.refusals)
		})
	}
}

func checkReasons(t *testing.T, kind string, got []Reason, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %+v, want %d matching %q", kind, got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i].Reason, want[i]) {
			t.Errorf("%s[%d] = %q, want it to contain %q", kind, i, got[i].Reason, want[i])
		}
	}
}

func TestDecideReasonCarriesRuleAndApprovers(t *testing.T) {
	rules := []*Rule{{Name: "few-destroys", MaxDestroy: intp(0), Approvers: []string{"alice", "bob"}}}
	d := Decide(context.Background(), alice, handPlan(1), nil, rules, time.Second)
	if len(d.Holds) != 1 || d.Holds[0].Rule != "few-destroys" || !slices.Equal(d.Holds[0].Approvers, []string{"alice", "bob"}) {
		t.Errorf("holds %+v, want one from few-destroys approvable by alice, bob", d.Holds)
	}
}

func TestDecideUsesGivenSummary(t *testing.T) {
	// The summary passed in is used as is (the caller analysed the same JSON).
	sum := &Summary{Destroy: 7, ByAction: map[string][]string{}}
	d := Decide(context.Background(), alice, handPlan(0), sum, []*Rule{{Name: "few", MaxDestroy: intp(0)}}, time.Second)
	if d.Outcome != Hold || !strings.Contains(d.Holds[0].Reason, "plan destroys 7 resources") {
		t.Errorf("decision %+v, want a hold for 7 destroys", d)
	}
}

func TestDecideOnRealPlans(t *testing.T) {
	pl := plans(t)
	p := compileFile(t, "limit_destroys.rego")
	rules := []*Rule{
		{Name: "few-destroys", Templates: []string{"network"}, MaxDestroy: intp(2)},
		{Name: "policy", Policy: p},
	}
	cases := []struct {
		plan []byte
		want Outcome
	}{
		{pl.noChange, Pass}, {pl.shrink, Pass}, {pl.forget, Pass},
		{pl.protect, Hold}, {pl.replace, Refuse},
	}
	for i, c := range cases {
		if d := Decide(context.Background(), alice, c.plan, nil, rules, 10*time.Second); d.Outcome != c.want {
			t.Errorf("case %d: outcome %s, want %s: %+v", i, d.Outcome, c.want, d)
		}
	}
}

func TestNeedsSavedPlan(t *testing.T) {
	agent := alice
	agent.Requester, agent.Agent = "deploy-bot", true
	exempt := agent
	exempt.Exempted = true
	withReq := alice
	withReq.RequireApproval = true
	ai := alice
	ai.AIProposal = true
	dry := alice
	dry.Kind = KindDryRun

	maxD := &Rule{Name: "few", MaxDestroy: intp(0)}
	gateErr := &Rule{Name: "policy", PolicyErr: errors.New("bad")}
	prod := &Rule{Name: "prod", Templates: []string{"network"}, RequireApproval: true}
	approvers := &Rule{Name: "approvers", Approvers: []string{"bob"}}
	otherTpl := &Rule{Name: "dns", Templates: []string{"dns"}, RequireApproval: true, MaxDestroy: intp(0)}
	exclDry := &Rule{Name: "few", MaxDestroy: intp(0), ExcludeDryRun: true}

	cases := []struct {
		name  string
		rules []*Rule
		req   Request
		want  bool
	}{
		{"no rules: apply -auto-approve", nil, alice, false},
		{"a rule for another template", []*Rule{otherTpl}, alice, false},
		{"max_destroy rule covers it", []*Rule{maxD}, alice, true},
		{"plan_gate that failed to compile covers it", []*Rule{gateErr}, alice, true},
		{"require_approval rule would hold it", []*Rule{prod}, alice, true},
		{"approvers rule would hold it", []*Rule{approvers}, alice, true},
		{"submission asks for approval", nil, withReq, true},
		{"AI proposal", nil, ai, true},
		{"agent", nil, agent, true},
		{"exempted agent, no rule", nil, exempt, false},
		{"exempted agent, covering rule", []*Rule{maxD}, exempt, true},
		{"dry run excluded", []*Rule{exclDry}, dry, false},
	}
	for _, c := range cases {
		if got := NeedsSavedPlan(c.rules, c.req); got != c.want {
			t.Errorf("%s: NeedsSavedPlan = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCoversAndWouldHold(t *testing.T) {
	r := &Rule{Templates: []string{"network"}, Projects: []string{"infra"}, Kinds: []string{KindApply}, Requesters: []string{"alice"}, RequireApproval: true}
	if !r.Covers(alice) || !r.WouldHold(alice) {
		t.Error("rule matching every selector does not cover/hold")
	}
	for _, mod := range []func(*Request){
		func(q *Request) { q.Template = "dns" },
		func(q *Request) { q.Project = "other" },
		func(q *Request) { q.Kind = KindDryRun },
		func(q *Request) { q.Kind = KindCheck },
		func(q *Request) { q.Requester = "mallory" },
	} {
		q := alice
		mod(&q)
		if r.Covers(q) || r.WouldHold(q) {
			t.Errorf("rule covers %+v", q)
		}
	}
	if (&Rule{MaxDestroy: intp(1), Approvers: []string{"a"}}).WouldHold(alice) {
		t.Error("a max_destroy rule with approvers would hold every apply")
	}
	if !(&Rule{MaxDestroy: intp(1)}).PlanContent() || (&Rule{RequireApproval: true}).PlanContent() {
		t.Error("PlanContent wrong")
	}
	chk := alice
	chk.Kind = KindCheck
	excl := &Rule{Templates: []string{"network"}, ExcludeDryRun: true}
	if excl.Covers(chk) || !excl.ExemptsDryRun(chk) {
		t.Error("exclude_dry_run rule covers a drift check, or does not say it exempts it")
	}
	if excl.ExemptsDryRun(alice) || (&Rule{}).ExemptsDryRun(chk) {
		t.Error("ExemptsDryRun true for an apply, or for a rule without exclude_dry_run")
	}
	other := chk
	other.Template = "dns"
	if excl.ExemptsDryRun(other) {
		t.Error("ExemptsDryRun true for a check the rule would not cover anyway")
	}
}

func TestExempt(t *testing.T) {
	ex := []*Exemption{
		{Name: "any-agent-names-nobody"},
		{Name: "bot", Agents: []string{"deploy-bot"}, Templates: []string{"network"}},
		{Name: "bot-dry", Agents: []string{"deploy-bot"}, Kinds: []string{KindDryRun}},
	}
	agent := Request{Template: "network", Kind: KindApply, Requester: "deploy-bot", Agent: true}
	if e, ok := Exempt(ex, agent); !ok || e.Name != "bot" {
		t.Errorf("Exempt = %v, %v; want bot", e, ok)
	}
	dry := agent
	dry.Template, dry.Kind = "dns", KindDryRun
	if e, ok := Exempt(ex, dry); !ok || e.Name != "bot-dry" {
		t.Errorf("Exempt(dry dns) = %v, %v; want bot-dry", e, ok)
	}
	other := agent
	other.Template = "dns"
	if e, ok := Exempt(ex, other); ok {
		t.Errorf("Exempt(apply dns) = %v, want none", e)
	}
	stranger := agent
	stranger.Requester = "other-bot"
	if e, ok := Exempt(ex, stranger); ok {
		t.Errorf("Exempt(other-bot) = %v, want none (an exemption with no agents covers nobody)", e)
	}
	if _, ok := Exempt(ex, alice); ok {
		t.Error("a person is exempted")
	}
}

func TestOutcomeString(t *testing.T) {
	if Pass.String() != "pass" || Hold.String() != "hold" || Refuse.String() != "refuse" || Outcome(9).String() != "Outcome(9)" {
		t.Error("Outcome.String wrong")
	}
}

// One compiled policy serves concurrent decisions (the server decides
// proposals of several runs at once); run with -race.
func TestDecideConcurrent(t *testing.T) {
	pl := plans(t)
	rules := []*Rule{{Name: "policy", Policy: compileFile(t, "limit_destroys.rego")}}
	want := map[int]Outcome{0: Refuse, 1: Hold, 2: Pass}
	docs := [][]byte{pl.replace, pl.protect, pl.shrink}
	errs := make(chan string, 12)
	done := make(chan struct{})
	for g := range 12 {
		go func() {
			defer func() { done <- struct{}{} }()
			i := g % 3
			if d := Decide(context.Background(), alice, docs[i], nil, rules, 10*time.Second); d.Outcome != want[i] {
				errs <- fmt.Sprintf("plan %d: %s, want %s", i, d.Outcome, want[i])
			}
		}()
	}
	for range 12 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAMergesApplyIsHeldSayingAMergeIsNoApproval: the apply a forge merge
// proposes is held as a submission asking for approval, and its hold says
// why in the merge's words, not as if the merger had passed
// --require-approval.
func TestAMergesApplyIsHeldSayingAMergeIsNoApproval(t *testing.T) {
	plan := []byte(`{"format_version":"1.2","resource_changes":[]}`)
	sum, err := AnalyzePlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	dec := Decide(context.Background(), Request{Template: "t", Kind: KindApply, Requester: "root", Forge: true, RequireApproval: true}, plan, sum, nil, time.Second)
	if dec.Outcome != Hold || len(dec.Holds) != 1 || !strings.Contains(dec.Holds[0].Reason, "a merge is not an approval") {
		t.Fatalf("decision = %+v, want one hold saying a merge is not an approval", dec)
	}
}
