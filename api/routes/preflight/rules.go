package preflight

import (
	"fmt"
	"strings"
)

// Verdicts, from worst to best.
const (
	Avoid   = "AVOID"
	Caution = "CAUTION"
	OK      = "OK"
)

// Score penalties: the score is 100 less these per rule fired, at least 0.
const (
	avoidPenalty   = 40
	cautionPenalty = 15
)

// Thresholds of the rules.
const (
	minRunsForRate   = 20   // fewer runs say too little about a success rate
	avoidSuccessRate = 0.80 // below: most callers would see failures
	okSuccessRate    = 0.95
	staleDays        = 30
	abandonedDays    = 90
	oldBuildDays     = 365
	fewUsers         = 5
)

// Facts are what the rules read, taken from the actor's public record.
type Facts struct {
	Deprecated     bool
	Public         bool
	Notice         string // NONE, UNDER_MAINTENANCE, RESIDENTIAL_PROXY_REQUIRED
	RunsTotal      int64  // other users' runs of the last 30 days; -1 when not published
	RunsSucceeded  int64
	LastRunDaysAgo int // -1 when never run
	BuildDaysAgo   int // age of the latest build; -1 when unknown
	Users30Days    int64
	PricingModel   string
}

// SuccessRate is succeeded over total runs, 0 without runs.
func (f Facts) SuccessRate() float64 {
	if f.RunsTotal <= 0 {
		return 0
	}
	return float64(f.RunsSucceeded) / float64(f.RunsTotal)
}

// Rule is one stated rule of the preflight.
type Rule struct {
	ID, Verdict, Doc string
	fires            func(Facts) (string, bool)
}

// Alert is a rule that fired, with its verdict and the evidence.
type Alert struct {
	Rule     string `json:"rule"`
	Verdict  string `json:"verdict"`
	Evidence string `json:"evidence"`
}

// Rules are the preflight, in the order they are reported. The verdict is AVOID when an
// AVOID rule fires, CAUTION when only CAUTION rules fire, OK when none does. README.md states
// the same.
var Rules = []Rule{
	{"deprecated", Avoid, "the owner marked the actor deprecated",
		func(f Facts) (string, bool) { return "isDeprecated is true", f.Deprecated }},
	{"low_success_rate", Avoid, fmt.Sprintf("fewer than %.0f%% of other users' runs of the last 30 days succeeded (at least %d runs)", avoidSuccessRate*100, minRunsForRate),
		func(f Facts) (string, bool) {
			return fmt.Sprintf("%d of %d runs succeeded (%.1f%%)", f.RunsSucceeded, f.RunsTotal, 100*f.SuccessRate()),
				f.RunsTotal >= minRunsForRate && f.SuccessRate() < avoidSuccessRate
		}},
	{"abandoned", Avoid, fmt.Sprintf("no run started in the last %d days", abandonedDays),
		func(f Facts) (string, bool) {
			return lastRun(f), f.LastRunDaysAgo < 0 || f.LastRunDaysAgo > abandonedDays
		}},
	{"success_rate_below_95", Caution, fmt.Sprintf("between %.0f%% and %.0f%% of other users' runs of the last 30 days succeeded (at least %d runs)", avoidSuccessRate*100, okSuccessRate*100, minRunsForRate),
		func(f Facts) (string, bool) {
			r := f.SuccessRate()
			return fmt.Sprintf("%d of %d runs succeeded (%.1f%%)", f.RunsSucceeded, f.RunsTotal, 100*r),
				f.RunsTotal >= minRunsForRate && r >= avoidSuccessRate && r < okSuccessRate
		}},
	{"too_few_runs", Caution, fmt.Sprintf("fewer than %d runs by other users in the last 30 days, or none published (private actor)", minRunsForRate),
		func(f Facts) (string, bool) {
			if f.RunsTotal < 0 {
				return "no public run statistics", true
			}
			return fmt.Sprintf("%d runs in 30 days", f.RunsTotal), f.RunsTotal < minRunsForRate
		}},
	{"not_recently_run", Caution, fmt.Sprintf("the last run started between %d and %d days ago", staleDays, abandonedDays),
		func(f Facts) (string, bool) {
			return lastRun(f), f.LastRunDaysAgo > staleDays && f.LastRunDaysAgo <= abandonedDays
		}},
	{"old_build", Caution, fmt.Sprintf("the latest build is more than %d days old", oldBuildDays),
		func(f Facts) (string, bool) {
			return fmt.Sprintf("latest build %d days ago", f.BuildDaysAgo), f.BuildDaysAgo > oldBuildDays
		}},
	{"few_users", Caution, fmt.Sprintf("fewer than %d users in the last 30 days", fewUsers),
		func(f Facts) (string, bool) {
			return fmt.Sprintf("%d users in 30 days", f.Users30Days), f.Users30Days < fewUsers
		}},
	{"notice", Caution, "the store shows a notice on the actor (under maintenance, residential proxy required)",
		func(f Facts) (string, bool) {
			return "notice " + f.Notice, f.Notice != "" && !strings.EqualFold(f.Notice, "NONE")
		}},
	{"not_public", Caution, "the actor is not public in the store",
		func(f Facts) (string, bool) { return "isPublic is false", !f.Public }},
	{"monthly_rental", Caution, "the actor is rented by the month: one call costs a whole month's rental",
		func(f Facts) (string, bool) {
			return "pricing model " + f.PricingModel, f.PricingModel == "FLAT_PRICE_PER_MONTH"
		}},
}

func lastRun(f Facts) string {
	if f.LastRunDaysAgo < 0 {
		return "never run"
	}
	return fmt.Sprintf("last run %d days ago", f.LastRunDaysAgo)
}

// Verdict applies the rules; the score is 100 less 40 per AVOID rule and 15 per CAUTION rule
// fired, at least 0.
func Verdict(f Facts) (string, int, []Alert) {
	verdict, score, alerts := OK, 100, []Alert{}
	for _, r := range Rules {
		ev, ok := r.fires(f)
		if !ok {
			continue
		}
		alerts = append(alerts, Alert{Rule: r.ID, Verdict: r.Verdict, Evidence: ev})
		switch r.Verdict {
		case Avoid:
			verdict, score = Avoid, score-avoidPenalty
		case Caution:
			if verdict == OK {
				verdict = Caution
			}
			score -= cautionPenalty
		}
	}
	return verdict, max(score, 0), alerts
}

// method states the rules in the answer itself.
var method = func() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict from the actor's public record: AVOID if an AVOID rule fires, CAUTION if only CAUTION rules fire, OK otherwise; score = 100 - %d per AVOID rule - %d per CAUTION rule (at least 0). Rules: ", avoidPenalty, cautionPenalty)
	for i, r := range Rules {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s): %s", r.ID, r.Verdict, r.Doc)
	}
	b.WriteString(". Run statistics are the store's: other users' runs only, the owner's own runs excluded.")
	return b.String()
}()
