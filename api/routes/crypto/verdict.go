package crypto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/goplus"
	"github.com/peage/appliance/api/upstream/honeypot"
	"github.com/peage/appliance/internal/fanout"
	"github.com/peage/appliance/internal/state"
)

// Results keeps answers under a caller's idempotency key (internal/state in production).
type Results interface {
	PutResult(state.Result) (state.Result, error)
	Result(key string) (state.Result, bool)
}

// verdictRetention is how long a requestKey returns the same verdict.
const verdictRetention = 24 * time.Hour

// Grades, best to worst.
const (
	GradeBased       = "BASED"
	GradeMid         = "MID"
	GradeCooked      = "COOKED"
	GradeRadioactive = "RADIOACTIVE"
)

// VerdictMethod names the scoring method and its version; the answer carries both.
const (
	VerdictMethod  = "peage-token-verdict"
	VerdictVersion = "1"
)

// chainIDs maps the chain parameter to the ids GoPlus and honeypot.is use.
var chainIDs = map[string]string{"base": "8453", "ethereum": "1"}

// Flag is one risk found, with the points it adds and what showed it.
type Flag struct {
	Code     string `json:"code"`
	Weight   int    `json:"weight"`
	Evidence string `json:"evidence"`
	Source   string `json:"source"`
}

// Rule is one scored check of the method.
type Rule struct {
	Code   string
	Weight int
	Doc    string
}

// Rules are the method, in the order flags are reported. The score is the sum of the weights
// of the flags raised, capped at 100; the grade is BASED below 20, MID below 50, COOKED below
// 80, RADIOACTIVE from 80, and RADIOACTIVE whatever the score when HONEYPOT is raised.
var Rules = []Rule{
	{"HONEYPOT", 100, "a sell is blocked: honeypot.is's simulation or GoPlus's is_honeypot"},
	{"CANNOT_SELL_ALL", 40, "holders cannot sell their whole balance (GoPlus cannot_sell_all)"},
	{"SIMULATION_FAILED", 20, "honeypot.is could not simulate a buy and a sell"},
	{"SELL_TAX_HIGH", 30, "sell tax above 10 %"},
	{"TAX", 10, "buy or sell tax above 0 and at most 10 %"},
	{"OWNER_CHANGE_BALANCE", 25, "the owner can change balances"},
	{"HIDDEN_OWNER", 20, "the contract hides an owner"},
	{"TAKE_BACK_OWNERSHIP", 20, "a renounced ownership can be taken back"},
	{"SELFDESTRUCT", 20, "the contract can self-destruct"},
	{"UNVERIFIED_SOURCE", 20, "the source code is not verified"},
	{"MINT_FUNCTION", 15, "the supply can be minted"},
	{"PAUSE_FUNCTION", 15, "transfers can be paused"},
	{"BLACKLIST_FUNCTION", 10, "addresses can be blacklisted"},
	{"OWNER_NOT_RENOUNCED", 10, "an owner address holds the owner's privileges"},
	{"PROXY", 10, "the code is upgradeable behind a proxy"},
	{"LIQUIDITY_LOW", 15, "liquidity of the main pair below $50,000"},
	{"LIQUIDITY_UNLOCKED", 15, "less than half of the LP tokens locked or burnt"},
	{"HOLDER_CONCENTRATION", 15, "the ten largest holders other than contracts and locks own more than 50 %"},
	{"YOUNG_PAIR", 10, "the main pair was created less than 7 days ago (the contract age proxy)"},
}

func weightOf(code string) int {
	for _, r := range Rules {
		if r.Code == code {
			return r.Weight
		}
	}
	panic("verdict: no rule " + code)
}

// VerdictAnswer is /v1/token/verdict.
type VerdictAnswer struct {
	Token           VerdictToken    `json:"token"`
	Grade           string          `json:"grade"`
	RiskScore       int             `json:"risk_score"`
	OneLiner        string          `json:"one_liner"`
	Flags           []Flag          `json:"flags"`
	Unchecked       []string        `json:"unchecked"` // checks no source answered: unknown, not safe
	Market          VerdictMkt      `json:"market"`
	Holders         VerdictHold     `json:"holders"`
	SourcesAnswered []string        `json:"sources_answered"`
	SourcesFailed   []fanout.Source `json:"sources_failed"`
	Method          VerdictMeta     `json:"method"`
	VerdictAt       string          `json:"verdict_at"`
	RequestKey      string          `json:"request_key,omitempty"`
	Replayed        bool            `json:"replayed"`
}

// VerdictToken names the token.
type VerdictToken struct {
	Address string `json:"address"`
	Chain   string `json:"chain"`
	Name    string `json:"name,omitempty"`
	Symbol  string `json:"symbol,omitempty"`
}

// VerdictMkt is the live market data the sources gave.
type VerdictMkt struct {
	LiquidityUSD  *float64 `json:"liquidity_usd"`
	Pair          string   `json:"pair,omitempty"`
	PairCreatedAt string   `json:"pair_created_at,omitempty"`
	BuyTaxPct     *float64 `json:"buy_tax_pct"`
	SellTaxPct    *float64 `json:"sell_tax_pct"`
}

// VerdictHold is the holder picture.
type VerdictHold struct {
	Count         *int64   `json:"count"`
	Top10SharePct *float64 `json:"top10_share_pct"` // contracts and locked holdings left out
	LPLockedPct   *float64 `json:"lp_locked_pct"`
}

// VerdictMeta states the method in the answer.
type VerdictMeta struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Rules   string `json:"rules"`
}

var verdictRules = func() string {
	var b strings.Builder
	b.WriteString("risk_score = sum of the weights of the flags raised, capped at 100; grade BASED < 20 ≤ MID < 50 ≤ COOKED < 80 ≤ RADIOACTIVE, RADIOACTIVE whenever HONEYPOT is raised. Flags: ")
	for i, r := range Rules {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%d): %s", r.Code, r.Weight, r.Doc)
	}
	b.WriteString(". A check no source answered is listed in unchecked and scores nothing: unknown is not safe.")
	return b.String()
}()

// Facts are what the rules read, from GoPlus (sec) and honeypot.is (sim); either may be nil.
type Facts struct {
	Sec *goplus.Security
	Sim *honeypot.Result
	Now time.Time
}

// Grade maps a score to its grade.
func Grade(score int, honeypot bool) string {
	switch {
	case honeypot || score >= 80:
		return GradeRadioactive
	case score >= 50:
		return GradeCooked
	case score >= 20:
		return GradeMid
	}
	return GradeBased
}

const zeroAddr = "0x0000000000000000000000000000000000000000"

// Assess applies the rules to the facts.
func Assess(f Facts) (flags []Flag, unchecked []string, mkt VerdictMkt, hold VerdictHold) {
	flags, unchecked = []Flag{}, []string{}
	raise := func(code, src, ev string) {
		flags = append(flags, Flag{Code: code, Weight: weightOf(code), Evidence: ev, Source: src})
	}
	// gp evaluates one GoPlus flag: "1" raises, "0" clears, anything else is unknown.
	gp := func(code, field, val string) {
		switch {
		case f.Sec == nil:
			unchecked = append(unchecked, code)
		case val == "1":
			raise(code, "goplus", field+" = 1")
		case val != "0":
			unchecked = append(unchecked, code)
		}
	}
	// Honeypot: the simulation first, GoPlus's flag as well.
	switch {
	case f.Sim != nil && f.Sim.HoneypotResult != nil && f.Sim.HoneypotResult.IsHoneypot:
		raise("HONEYPOT", "honeypot.is", "simulated sell failed: "+f.Sim.HoneypotResult.HoneypotReason)
	case f.Sec != nil && f.Sec.IsHoneypot == "1":
		raise("HONEYPOT", "goplus", "is_honeypot = 1")
	case f.Sim == nil && (f.Sec == nil || f.Sec.IsHoneypot != "0"):
		unchecked = append(unchecked, "HONEYPOT")
	}
	gp("CANNOT_SELL_ALL", "cannot_sell_all", secField(f.Sec, func(s *goplus.Security) string { return s.CannotSellAll }))
	switch {
	case f.Sim == nil:
		unchecked = append(unchecked, "SIMULATION_FAILED")
	case !f.Sim.SimulationSuccess:
		raise("SIMULATION_FAILED", "honeypot.is", "simulationSuccess = false")
	}
	// Taxes, in percent: the simulation's when it ran, else GoPlus's fractions.
	buy, sell, taxSrc := (*float64)(nil), (*float64)(nil), ""
	if f.Sim != nil && f.Sim.SimulationSuccess && f.Sim.SimulationResult != nil {
		buy, sell, taxSrc = f.Sim.SimulationResult.BuyTax.Ptr(), f.Sim.SimulationResult.SellTax.Ptr(), "honeypot.is"
	} else if f.Sec != nil {
		buy, sell, taxSrc = pct(f.Sec.BuyTax), pct(f.Sec.SellTax), "goplus"
	}
	mkt.BuyTaxPct, mkt.SellTaxPct = buy, sell
	switch {
	case buy == nil && sell == nil:
		unchecked = append(unchecked, "TAX")
	case sell != nil && *sell > 10:
		raise("SELL_TAX_HIGH", taxSrc, fmt.Sprintf("sell tax %s %%", num(*sell)))
	case (buy != nil && *buy > 0) || (sell != nil && *sell > 0):
		raise("TAX", taxSrc, fmt.Sprintf("buy tax %s %%, sell tax %s %%", numPtr(buy), numPtr(sell)))
	}
	s := func(get func(*goplus.Security) string) string { return secField(f.Sec, get) }
	gp("OWNER_CHANGE_BALANCE", "owner_change_balance", s(func(x *goplus.Security) string { return x.OwnerChangeBalance }))
	gp("HIDDEN_OWNER", "hidden_owner", s(func(x *goplus.Security) string { return x.HiddenOwner }))
	gp("TAKE_BACK_OWNERSHIP", "can_take_back_ownership", s(func(x *goplus.Security) string { return x.CanTakeBackOwnership }))
	gp("SELFDESTRUCT", "selfdestruct", s(func(x *goplus.Security) string { return x.Selfdestruct }))
	switch {
	case f.Sim != nil && f.Sim.ContractCode != nil && !f.Sim.ContractCode.OpenSource:
		raise("UNVERIFIED_SOURCE", "honeypot.is", "contractCode.openSource = false")
	case f.Sim != nil && f.Sim.ContractCode != nil:
	default:
		gp("UNVERIFIED_SOURCE", "is_open_source", flip(s(func(x *goplus.Security) string { return x.IsOpenSource })))
	}
	gp("MINT_FUNCTION", "is_mintable", s(func(x *goplus.Security) string { return x.IsMintable }))
	gp("PAUSE_FUNCTION", "transfer_pausable", s(func(x *goplus.Security) string { return x.TransferPausable }))
	gp("BLACKLIST_FUNCTION", "is_blacklisted", s(func(x *goplus.Security) string { return x.IsBlacklisted }))
	switch {
	case f.Sec == nil:
		unchecked = append(unchecked, "OWNER_NOT_RENOUNCED")
	case f.Sec.OwnerAddress != "" && !strings.EqualFold(f.Sec.OwnerAddress, zeroAddr) && !strings.EqualFold(f.Sec.OwnerAddress, "0x000000000000000000000000000000000000dead"):
		raise("OWNER_NOT_RENOUNCED", "goplus", "owner_address = "+f.Sec.OwnerAddress)
	}
	switch {
	case f.Sim != nil && f.Sim.ContractCode != nil && f.Sim.ContractCode.IsProxy:
		raise("PROXY", "honeypot.is", "contractCode.isProxy = true")
	case f.Sim != nil && f.Sim.ContractCode != nil:
	default:
		gp("PROXY", "is_proxy", s(func(x *goplus.Security) string { return x.IsProxy }))
	}
	// Liquidity: the simulated pair's, else the sum GoPlus lists per dex.
	if f.Sim != nil && f.Sim.Pair != nil && f.Sim.Pair.Liquidity.Valid {
		mkt.LiquidityUSD, mkt.Pair = f.Sim.Pair.Liquidity.Ptr(), f.Sim.Pair.Pair.Address
		if ts := f.Sim.Pair.CreatedAtTimestamp; ts.Valid && ts.V > 0 {
			created := time.Unix(ts.V, 0).UTC()
			mkt.PairCreatedAt = created.Format(time.RFC3339)
			if f.Now.Sub(created) < 7*24*time.Hour {
				raise("YOUNG_PAIR", "honeypot.is", "pair created "+mkt.PairCreatedAt)
			}
		}
	} else if f.Sec != nil && len(f.Sec.Dex) > 0 {
		var sum float64
		for _, d := range f.Sec.Dex {
			sum += d.Liquidity.V
		}
		mkt.LiquidityUSD, mkt.Pair = &sum, f.Sec.Dex[0].Pair
	}
	if mkt.PairCreatedAt == "" {
		unchecked = append(unchecked, "YOUNG_PAIR")
	}
	if mkt.LiquidityUSD == nil {
		unchecked = append(unchecked, "LIQUIDITY_LOW")
	} else if *mkt.LiquidityUSD < 50_000 {
		raise("LIQUIDITY_LOW", map[bool]string{true: "honeypot.is", false: "goplus"}[mkt.PairCreatedAt != ""], "liquidity $"+num(*mkt.LiquidityUSD))
	}
	// Holders (GoPlus only): the ten largest that are neither contracts nor locked.
	if f.Sec == nil {
		unchecked = append(unchecked, "LIQUIDITY_UNLOCKED", "HOLDER_CONCENTRATION")
	} else {
		if n, err := strconv.ParseInt(f.Sec.HolderCount, 10, 64); err == nil {
			hold.Count = &n
		}
		var top float64
		counted := 0
		for _, h := range f.Sec.Holders {
			if h.IsContract.V == 1 || h.IsLocked.V == 1 || !h.Percent.Valid || h.Percent.V > 1 || counted == 10 {
				continue
			}
			top += h.Percent.V
			counted++
		}
		topPct := top * 100
		hold.Top10SharePct = &topPct
		if topPct > 50 {
			raise("HOLDER_CONCENTRATION", "goplus", fmt.Sprintf("top %d holders own %s %%", counted, num(topPct)))
		}
		if len(f.Sec.LPHolders) == 0 {
			unchecked = append(unchecked, "LIQUIDITY_UNLOCKED")
		} else {
			var locked float64
			for _, h := range f.Sec.LPHolders {
				burnt := strings.EqualFold(h.Address, zeroAddr) || strings.EqualFold(h.Address, "0x000000000000000000000000000000000000dead")
				if (h.IsLocked.V == 1 || burnt) && h.Percent.Valid && h.Percent.V <= 1 {
					locked += h.Percent.V
				}
			}
			lp := locked * 100
			hold.LPLockedPct = &lp
			if lp < 50 {
				raise("LIQUIDITY_UNLOCKED", "goplus", fmt.Sprintf("%s %% of LP tokens locked or burnt", num(lp)))
			}
		}
	}
	if hold.Count == nil && f.Sim != nil && f.Sim.Token.TotalHolders.Valid {
		n := f.Sim.Token.TotalHolders.V
		hold.Count = &n
	}
	order := func(code string) int { return slices.IndexFunc(Rules, func(r Rule) bool { return r.Code == code }) }
	slices.SortStableFunc(flags, func(a, b Flag) int { return order(a.Code) - order(b.Code) })
	slices.SortFunc(unchecked, func(a, b string) int { return order(a) - order(b) })
	unchecked = slices.Compact(unchecked)
	return flags, unchecked, mkt, hold
}

func secField(s *goplus.Security, get func(*goplus.Security) string) string {
	if s == nil {
		return ""
	}
	return get(s)
}

// flip turns is_open_source into "unverified": "1" ↔ "0", unknown stays unknown.
func flip(v string) string {
	switch v {
	case "1":
		return "0"
	case "0":
		return "1"
	}
	return v
}

// pct reads a GoPlus tax fraction ("0.05") as percent; nil when absent.
func pct(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	v *= 100
	return &v
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func numPtr(f *float64) string {
	if f == nil {
		return "unknown"
	}
	return num(*f)
}

func oneLiner(grade string, score int, flags []Flag) string {
	if len(flags) == 0 {
		return fmt.Sprintf("%s (%d/100): no risk flag raised by the checks that could run.", grade, score)
	}
	codes := make([]string, 0, 3)
	for _, f := range flags[:min(3, len(flags))] {
		codes = append(codes, f.Code)
	}
	return fmt.Sprintf("%s (%d/100): %s.", grade, score, strings.Join(codes, ", "))
}

func (r *Routes) verdict(ctx context.Context, req *catalog.Request) (any, error) {
	addr := req.Args.Str("tokenAddress")
	chain := req.Args.Str("chain")
	key := req.Args.Str("requestKey")
	storeKey := ""
	if key != "" && r.results != nil {
		storeKey = "token.verdict|" + chain + "|" + strings.ToLower(addr) + "|" + key
		if kept, ok := r.results.Result(storeKey); ok {
			return replay(kept)
		}
	}
	chainID := chainIDs[chain]
	var (
		sec *goplus.Security
		sim *honeypot.Result
	)
	outcomes, errs := r.fan().Run(ctx,
		fanout.Call{Source: goplus.Name, Out: &sec, Run: func(ctx context.Context) (err error) { sec, err = r.goplus.TokenSecurity(ctx, chainID, addr); return }},
		fanout.Call{Source: honeypot.Name, Out: &sim, Run: func(ctx context.Context) (err error) { sim, err = r.honeypot.IsHoneypot(ctx, chainID, addr); return }})
	sErr, hErr := errs[0], errs[1]
	out := VerdictAnswer{Token: VerdictToken{Address: addr, Chain: chain}, SourcesAnswered: []string{}, SourcesFailed: []fanout.Source{},
		Method: VerdictMeta{Name: VerdictMethod, Version: VerdictVersion, Rules: verdictRules}, RequestKey: key}
	if sErr == nil {
		out.SourcesAnswered = append(out.SourcesAnswered, goplus.Name)
		out.Token.Name, out.Token.Symbol = sec.TokenName, sec.TokenSymbol
	} else {
		out.SourcesFailed = append(out.SourcesFailed, outcomes[0])
	}
	if hErr == nil {
		out.SourcesAnswered = append(out.SourcesAnswered, honeypot.Name)
		if out.Token.Name == "" {
			out.Token.Name, out.Token.Symbol = sim.Token.Name, sim.Token.Symbol
		}
	} else {
		out.SourcesFailed = append(out.SourcesFailed, outcomes[1])
	}
	if sec == nil && sim == nil {
		if errors.Is(sErr, goplus.ErrNoData) && upstream.IsNotFound(hErr) {
			return nil, apierr.NotFound("neither GoPlus nor honeypot.is knows token %s on %s", addr, chain)
		}
		return nil, apierr.Upstream("token-risk", errors.Join(sErr, hErr), "neither GoPlus nor honeypot.is answered for %s", addr)
	}
	now := r.now().UTC()
	var hp bool
	out.Flags, out.Unchecked, out.Market, out.Holders = Assess(Facts{Sec: sec, Sim: sim, Now: now})
	for _, f := range out.Flags {
		out.RiskScore += f.Weight
		hp = hp || f.Code == "HONEYPOT"
	}
	out.RiskScore = min(out.RiskScore, 100)
	out.Grade = Grade(out.RiskScore, hp)
	out.OneLiner = oneLiner(out.Grade, out.RiskScore, out.Flags)
	out.VerdictAt = now.Format(time.RFC3339)
	if storeKey != "" {
		body, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		kept, err := r.results.PutResult(state.Result{Key: storeKey, Body: body, CreatedAt: now, ExpiresAt: now.Add(verdictRetention)})
		switch {
		case errors.Is(err, state.ErrExists):
			return replay(kept) // a concurrent first call with the same key won
		case err != nil:
			return nil, apierr.From(fmt.Errorf("keeping the verdict under its requestKey: %w", err))
		}
	}
	return out, nil
}

func replay(kept state.Result) (any, error) {
	var v VerdictAnswer
	if err := json.Unmarshal(kept.Body, &v); err != nil {
		return nil, apierr.From(fmt.Errorf("reading the kept verdict: %w", err))
	}
	v.Replayed = true
	return v, nil
}
