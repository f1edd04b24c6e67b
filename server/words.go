package server

import (
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// Short names for the shared sentences of package api, so package
// server's code reads as it did.

func rulesPhrase(rules []string) string                     { return api.RulesPhrase(rules) }
func requestedHow(r store.Run) string                       { return api.RequestedHow(r) }
func plural(n int, one, many string) string                 { return api.Plural(n, one, many) }
func planCounts(p *store.Proposal) string                   { return api.PlanCounts(p) }
func findingText(f store.Finding) string                    { return api.FindingText(f) }
func reconcileNote(r store.Run) string                      { return api.ReconcileNote(r) }
func reasons(hs []store.Hold) string                        { return api.Reasons(hs) }
func answerText(v any) string                               { return api.AnswerText(v) }
func sortedTemplates(cfg *config.Config) []*config.Template { return api.SortedTemplates(cfg) }
