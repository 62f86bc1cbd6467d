package main

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/settle"
)

// setupMissing lists what first-boot setup has not provided yet, as the API daemon sees it:
// the payout address and the payment network's endpoint.
// The box starts without them; its paid routes answer 503 naming them (gateSetup).
func setupMissing(cfg config.Config) []string {
	var m []string
	if settle.PayToUnset(cfg.Payment.PayTo) {
		m = append(m, "the payout address (config key payment.pay_to, or `appliance firstboot --pay-to`)")
	}
	if cfg.Settle.RPCURL == "" { // the settle daemon reads the chain even when a remote facilitator settles
		m = append(m, "the payment network's JSON-RPC endpoint (config key settle.rpc_url)")
	}
	return m
}

// gateSetup makes every paid route answer 503 naming what first-boot setup lacks, before any
// 402: a box must not ask to be paid while payments would go nowhere. Free routes serve.
func (a *app) gateSetup(missing []string) {
	if len(missing) == 0 {
		return
	}
	err := errors.New("first-boot setup incomplete, missing: " + strings.Join(missing, "; "))
	for _, e := range a.cat.Entries() {
		if e.Kind == catalog.Paid {
			e.Ready = func() error { return err }
		}
	}
	a.setupMissing = missing
}

// loopback reports whether a listen address (HOST:PORT) accepts only local connections.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// operatorToken is the credential the operator port demands when it listens beyond loopback
// ("" when it stays on loopback). Such a port without its credential is a start error naming
// the keys: on a home LAN every device could otherwise read the box's figures and profiles.
func operatorToken(c config.Admin) (string, error) {
	if loopback(c.Addr) {
		return "", nil
	}
	tok, err := credential.Read(c.TokenFile)
	if err != nil {
		return "", fmt.Errorf("config key admin.addr: %s is not a loopback address, so the operator port needs its credential "+
			"(config key admin.token_file %q, made by `appliance firstboot`): %w", c.Addr, c.TokenFile, err)
	}
	return tok, nil
}

// requireToken guards the operator port: a bearer token (scripts) or the token as the Basic
// password under any user name (a browser's login prompt), compared in constant time.
func requireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := ""
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			got = strings.TrimSpace(v)
		} else if _, pw, ok := r.BasicAuth(); ok {
			got = pw
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="peage operator", charset="UTF-8"`)
			http.Error(w, "the operator port needs its credential (see /etc/peage/credentials/operator-token on the box)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
