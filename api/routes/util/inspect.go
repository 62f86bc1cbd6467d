package util

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// canonicalUSDC are the USDC contracts of the networks x402 is mostly used on.
var canonicalUSDC = map[string]string{
	"eip155:8453":  "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
	"eip155:84532": "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
}

// probeOrigin is the Origin the inspector's probe names, as a browser script's request does: a
// server may send its CORS headers only to such a request, and cors_expose judges what a
// browser client reads.
const probeOrigin = "https://example.com"

var testnets = map[string]bool{"eip155:84532": true, "eip155:11155111": true, "eip155:80002": true, "eip155:43113": true}

var (
	caip2Rx   = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	addressRx = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	atomicRx  = regexp.MustCompile(`^[0-9]+$`)
)

// Check is one verdict of the inspection.
type Check struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

type inspection struct {
	checks   []Check
	problems []string
}

func (in *inspection) check(name string, ok bool, problem string, args ...any) {
	c := Check{Check: name, OK: ok}
	if !ok {
		c.Detail = fmt.Sprintf(problem, args...)
		in.problems = append(in.problems, c.Detail)
	}
	in.checks = append(in.checks, c)
}

// inspect probes a URL the way an x402 client would (without ever paying) and lists concrete
// problems against the x402 v2 HTTP transport, with the v1 body form recognised.
func (r *Routes) inspect(ctx context.Context, req *catalog.Request) (any, error) {
	target, method := req.Args.Str("url"), req.Args.Str("method")
	var resp *http.Response
	var body []byte
	var err error
	current := target
	for range 5 { // follow a few redirects, each hop through the guard
		var payload *strings.Reader
		if method == http.MethodPost {
			payload = strings.NewReader("{}")
		}
		if payload != nil {
			resp, body, err = r.fetch(ctx, method, current, probeOrigin, payload)
		} else {
			resp, body, err = r.fetch(ctx, method, current, probeOrigin, nil)
		}
		if err != nil {
			return nil, targetError("url", err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			break
		}
		if current, err = resolveRef(current, loc); err != nil {
			break
		}
	}
	in := &inspection{}
	out := map[string]any{"url": target, "method": method, "final_url": current, "http_status": resp.StatusCode}
	u, _ := url.Parse(target)
	in.check("https", u.Scheme == "https", "the endpoint is served over plain HTTP; payments and receipts travel in clear")
	in.check("status_402", resp.StatusCode == http.StatusPaymentRequired, "an unpaid %s answered %d, not 402", method, resp.StatusCode)

	var accepts []x402.PaymentRequirements
	version := 0
	if h := resp.Header.Get(x402.HeaderPaymentRequired); h != "" {
		raw, derr := base64.StdEncoding.DecodeString(h)
		in.check("header_base64", derr == nil, "PAYMENT-REQUIRED is not standard padded base64 (RFC 4648 §4)")
		var pr x402.PaymentRequired
		jerr := json.Unmarshal(raw, &pr)
		if derr == nil {
			in.check("header_json", jerr == nil, "PAYMENT-REQUIRED does not decode to a PaymentRequired JSON object")
		}
		if derr == nil && jerr == nil {
			version = pr.X402Version
			in.check("header_version", pr.X402Version == 2, "PAYMENT-REQUIRED declares x402Version %d, want 2", pr.X402Version)
			in.check("resource_url", sameResource(pr.Resource.URL, current), "resource.url %q does not name the probed URL", pr.Resource.URL)
			in.check("description", pr.Resource.Description != "", "resource.description is empty: indexers and wallets show it to the payer")
			accepts = pr.Accepts
			out["payment_required"] = pr
		}
		expose := strings.ToUpper(resp.Header.Get("Access-Control-Expose-Headers"))
		in.check("cors_expose", strings.Contains(expose, "PAYMENT-REQUIRED"), "Access-Control-Expose-Headers does not list PAYMENT-REQUIRED: browser clients cannot read the challenge")
	} else if resp.StatusCode == http.StatusPaymentRequired {
		var v1 struct {
			X402Version int                   `json:"x402Version"`
			Accepts     []x402.RequirementsV1 `json:"accepts"`
		}
		if json.Unmarshal(body, &v1) == nil && v1.X402Version == 1 {
			version = 1
			in.check("v2_header", false, "only the legacy v1 body challenge is served; v2 clients read the PAYMENT-REQUIRED header")
			for _, a := range v1.Accepts {
				accepts = append(accepts, x402.PaymentRequirements{Scheme: a.Scheme, Network: a.Network, Amount: a.MaxAmountRequired,
					Asset: a.Asset, PayTo: a.PayTo, MaxTimeoutSeconds: a.MaxTimeoutSeconds, Extra: a.Extra})
			}
		} else {
			in.check("challenge_present", false, "the 402 carries neither a PAYMENT-REQUIRED header nor a v1 JSON body")
		}
	}
	out["x402_version"] = version
	if version != 0 {
		in.check("accepts_non_empty", len(accepts) > 0, "accepts is empty: there is no way to pay")
	}
	for i, a := range accepts {
		r.checkRequirement(in, i, a, version)
	}
	// The fields the spec names are there even when no accepted requirement says them: null.
	out["network"], out["pay_to"], out["asset"], out["scheme"], out["amount_atomic"], out["amount_usdc"], out["testnet"] = nil, nil, nil, nil, nil, nil, nil
	if len(accepts) > 0 {
		a := accepts[0]
		out["network"], out["pay_to"], out["asset"], out["scheme"] = a.Network, a.PayTo, a.Asset, a.Scheme
		out["amount_atomic"] = a.Amount
		if usd, ok := atomicToUSDC(a.Amount); ok {
			out["amount_usdc"] = usd
		}
		out["testnet"] = testnets[a.Network] || a.Network == "base-sepolia"
	}
	out["checks"] = in.checks
	if in.problems == nil {
		in.problems = []string{}
	}
	out["problems"] = in.problems
	out["x402_compliant"] = version != 0 && onlyAdvisory(in.checks)
	out["onchain_checks"] = "not run: the asset's code, decimals and EIP-712 name/version are compared with the canonical USDC address only"
	return out, nil
}

// advisory checks are reported as problems but do not break x402 compliance.
var advisory = map[string]bool{"https": true, "description": true, "cors_expose": true}

func onlyAdvisory(checks []Check) bool {
	for _, c := range checks {
		if !c.OK && !advisory[c.Check] {
			return false
		}
	}
	return true
}

func (r *Routes) checkRequirement(in *inspection, i int, a x402.PaymentRequirements, version int) {
	p := func(name string) string { return fmt.Sprintf("accepts[%d].%s", i, name) }
	in.check(p("scheme"), a.Scheme == "exact" || a.Scheme == "upto", "%s %q is not a scheme clients know (exact, upto)", p("scheme"), a.Scheme)
	if version == 2 {
		in.check(p("network"), caip2Rx.MatchString(a.Network), "%s %q is not a CAIP-2 id such as eip155:8453", p("network"), a.Network)
	}
	in.check(p("amount"), atomicRx.MatchString(a.Amount) && a.Amount != "0", "%s %q must be a positive integer in atomic units (no decimals)", p("amount"), a.Amount)
	in.check(p("payTo"), addressRx.MatchString(a.PayTo) && !strings.EqualFold(a.PayTo, "0x0000000000000000000000000000000000000000"),
		"%s %q is missing or not a usable address", p("payTo"), a.PayTo)
	in.check(p("asset"), addressRx.MatchString(a.Asset), "%s %q is not a token address", p("asset"), a.Asset)
	if want, ok := canonicalUSDC[a.Network]; ok && addressRx.MatchString(a.Asset) {
		in.check(p("asset_canonical"), strings.EqualFold(a.Asset, want), "%s %s is not the canonical USDC of %s (%s)", p("asset"), a.Asset, a.Network, want)
	}
	if addressRx.MatchString(a.PayTo) && addressRx.MatchString(a.Asset) {
		in.check(p("payTo_not_asset"), !strings.EqualFold(a.PayTo, a.Asset), "%s is the token contract itself", p("payTo"))
	}
	in.check(p("maxTimeoutSeconds"), a.MaxTimeoutSeconds >= 10 && a.MaxTimeoutSeconds <= 3600,
		"%s %d is outside 10 to 3600 seconds", p("maxTimeoutSeconds"), a.MaxTimeoutSeconds)
	if a.Scheme == "exact" {
		in.check(p("extra"), a.Extra != nil && a.Extra.Name != "" && a.Extra.Version != "",
			"%s lacks the token's EIP-712 name and version: clients cannot sign", p("extra"))
	}
}

func sameResource(resource, probed string) bool {
	a, err1 := url.Parse(resource)
	b, err2 := url.Parse(probed)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(a.Host, b.Host) && strings.TrimRight(a.Path, "/") == strings.TrimRight(b.Path, "/")
}

// atomicToUSDC renders atomic units (6 decimals) as a decimal string, exactly.
func atomicToUSDC(s string) (string, bool) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 {
		return "", false
	}
	return x402.Decimal(n, x402.USDCDecimals), true
}
