package settle

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/x402"
)

// Config is the settle daemon's part of the appliance configuration. What is paid, where and
// to whom (network, asset, token domain, payTo) has one source, the [payment] section, which
// the API's challenges are derived from as well; the daemon gets it through Payment.
type Config struct {
	Payment Payment `toml:"-"`
	// FacilitatorURL, when set (payment.facilitator_url), is the standard x402 facilitator that
	// verifies and settles in this daemon's stead; the ledger stays here (Options.Remote).
	FacilitatorURL string `toml:"-"`
	RPCURL         string `toml:"rpc_url"` // JSON-RPC endpoint of the payment network
	// HotKeyFile holds the gas-paying key (hex). A bare name is looked up in
	// $CREDENTIALS_DIRECTORY (systemd LoadCredential=).
	HotKeyFile string `toml:"hot_key_file"`
	Socket     string `toml:"socket"` // Unix socket of the facilitator API
	Listen     string `toml:"listen"` // optional loopback TCP address, e.g. 127.0.0.1:8402
	StateDir   string `toml:"state_dir"`
	// ExposureCap is the most one payer may owe for optimistic calls not yet settled (atomic units).
	ExposureCap uint64 `toml:"exposure_cap"`
	// TotalExposureCap is the most all payers together may owe for them.
	TotalExposureCap uint64 `toml:"total_exposure_cap"`
	// SettleMargin: an authorization must stay valid this long past the route's deadline; it is
	// settlement.settle_margin_seconds, which the API's gate enforces too.
	SettleMargin          time.Duration `toml:"-"`
	ReceiptTimeoutSeconds int           `toml:"receipt_timeout_seconds"`
	ReplaceAfterSeconds   int           `toml:"replace_after_seconds"`
	// SettlementsInFlight bounds the optimistic settlements between broadcast and receipt at
	// once, which bounds the exact calls a second the box sustains (Options.SettleConcurrency).
	SettlementsInFlight int `toml:"settlements_in_flight"`

	// The batch-settlement claimer's policy (ClaimPolicy): how often it looks at the channels,
	// the unclaimed value worth a claim transaction, and how long before a payer's timed
	// withdrawal can finalize its channel is claimed whatever that minimum.
	ClaimIntervalSeconds       int    `toml:"claim_interval_seconds"`
	ClaimMinValue              uint64 `toml:"claim_min_value"`
	ClaimMinChannelValue       uint64 `toml:"claim_min_channel_value"`
	ClaimWithdrawMarginSeconds int    `toml:"claim_withdraw_margin_seconds"`
}

// Claim policy defaults and bounds. A claim round costs about the same gas whatever it carries,
// so the minimum spreads it: 2.5 USDC (500 MICRO calls) keeps a round of one channel, claim and
// sweep with their L1 data fee, under 0.2% of the calls it carries on Circle's USDC at 0.01 gwei
// (ops/bench/batch; its run in docs/gas.md asks 2.01 USDC). Each channel adds its share of the
// claim's gas, so a channel joins a round only with 0.5 USDC unclaimed (the bench asks 0.405),
// or its withdrawal due; the margin leaves the claimer at least one
// look and a receipt wait before the shortest withdrawal delay (15 min) runs out.
const (
	DefaultClaimInterval       = 5 * time.Minute
	DefaultClaimMinValue       = 2_500_000
	DefaultClaimMinChannel     = 500_000
	DefaultClaimWithdrawMargin = 10 * time.Minute
	maxClaimInterval           = 24 * time.Hour
)

// DefaultConfig is Base mainnet USDC; PayTo, RPCURL and the hot key must be configured.
func DefaultConfig() Config {
	return Config{
		HotKeyFile: "settle-hot-key", Socket: "/run/peage-settle/settle.sock", StateDir: "/var/lib/peage/settle",
		ExposureCap: 1_000_000, TotalExposureCap: 20_000_000, SettleMargin: DefaultSettleMargin,
		ReceiptTimeoutSeconds: 90, ReplaceAfterSeconds: 30, SettlementsInFlight: DefaultSettlementsInFlight,
		ClaimIntervalSeconds: int(DefaultClaimInterval / time.Second), ClaimMinValue: DefaultClaimMinValue,
		ClaimMinChannelValue: DefaultClaimMinChannel, ClaimWithdrawMarginSeconds: int(DefaultClaimWithdrawMargin / time.Second),
	}
}

// ClaimPolicy is the claimer's policy from the configuration, or an error naming the key. The
// withdrawal margin must cover one claim interval and one receipt wait, or a withdrawal
// initiated just after a look could finalize before the claim that should precede it is mined.
func (c Config) ClaimPolicy() (ClaimPolicy, error) {
	var errs []error
	interval := time.Duration(c.ClaimIntervalSeconds) * time.Second
	margin := time.Duration(c.ClaimWithdrawMarginSeconds) * time.Second
	if interval <= 0 || interval > maxClaimInterval {
		errs = append(errs, fmt.Errorf("config key settle.claim_interval_seconds: must be between 1 and %d", int(maxClaimInterval/time.Second)))
	}
	if need := interval + time.Duration(max(c.ReceiptTimeoutSeconds, 0))*time.Second; interval > 0 && margin < need {
		errs = append(errs, fmt.Errorf("config key settle.claim_withdraw_margin_seconds: must be at least settle.claim_interval_seconds + settle.receipt_timeout_seconds (%d), so a withdrawal is claimed before it can finalize", int(need/time.Second)))
	}
	if err := errors.Join(errs...); err != nil {
		return ClaimPolicy{}, err
	}
	return ClaimPolicy{Interval: interval, MinClaimable: c.ClaimMinValue, MinChannelClaimable: c.ClaimMinChannelValue, WithdrawMargin: margin}, nil
}

// CheckInFlight refuses a bound on settlements in flight outside 1..MaxSettlementsInFlight,
// naming its key.
func (c Config) CheckInFlight() error {
	if c.SettlementsInFlight < 1 || c.SettlementsInFlight > MaxSettlementsInFlight {
		return fmt.Errorf("config key settle.settlements_in_flight: must be between 1 and %d", MaxSettlementsInFlight)
	}
	return nil
}

// Validate reports what is missing or wrong, naming the key.
func (c Config) Validate() error {
	var errs []error
	if c.RPCURL == "" {
		errs = append(errs, errors.New("settle.rpc_url is required"))
	}
	errs = append(errs, c.Payment.Validate())
	if c.Socket == "" && c.Listen == "" {
		errs = append(errs, errors.New("settle.socket or settle.listen is required"))
	}
	if c.Listen != "" {
		host, _, err := net.SplitHostPort(c.Listen)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			errs = append(errs, fmt.Errorf("settle.listen %q must be a loopback address", c.Listen))
		}
	}
	if _, err := c.ClaimPolicy(); err != nil {
		errs = append(errs, err)
	}
	if err := c.CheckInFlight(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// LoadKey reads a hex private key from path (a bare name is looked up in $CREDENTIALS_DIRECTORY).
func LoadKey(path string) (*ecdsa.PrivateKey, error) {
	path = credential.Path(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// NewHotKey makes a fresh gas-paying key on the box (first start): its hex for the credential
// file, and its address, which the operator funds with a little ETH for gas.
func NewHotKey() (keyHex, address string, err error) {
	k, err := crypto.GenerateKey()
	if err != nil {
		return "", "", err
	}
	return hex.EncodeToString(crypto.FromECDSA(k)), crypto.PubkeyToAddress(k.PublicKey).Hex(), nil
}

// KeyAddress is the address of the key in a credential file.
func KeyAddress(path string) (string, error) {
	k, err := LoadKey(path)
	if err != nil {
		return "", err
	}
	return crypto.PubkeyToAddress(k.PublicKey).Hex(), nil
}

// PayToUnset reports a payout address first-boot setup has not given yet: none, or the zero
// address, which pays nobody.
func PayToUnset(p string) bool {
	return p == "" || (common.IsHexAddress(p) && common.HexToAddress(p) == (common.Address{}))
}

// CheckPayTo refuses anything but a non-zero 0x address as the payout address: the one rule of
// the config, the setup check and `appliance firstboot --pay-to`.
func CheckPayTo(p string) error {
	if !strings.HasPrefix(p, "0x") || !common.IsHexAddress(p) || PayToUnset(p) {
		return fmt.Errorf("%q is not a non-zero 0x address (only the address: the payout key never lives on the box)", p)
	}
	return nil
}

// Missing lists what first-boot setup has not provided yet: the payout address, the RPC
// endpoint, the hot key's credential. A box lacking them still starts (see Run); a value that
// is present but wrong is a configuration error instead.
func (c Config) Missing() []string {
	var m []string
	if PayToUnset(c.Payment.PayTo) {
		m = append(m, "the payout address (config key payment.pay_to)")
	}
	if c.RPCURL == "" {
		m = append(m, "the payment network's JSON-RPC endpoint (config key settle.rpc_url)")
	}
	if _, err := os.Stat(credential.Path(c.HotKeyFile)); errors.Is(err, fs.ErrNotExist) {
		m = append(m, "the gas-paying hot key (credential "+c.HotKeyFile+", made by `appliance firstboot`)")
	}
	return m
}

// Run is the standalone daemon (`appliance settle`): it serves the facilitator until ctx ends.
// ready, when not nil, is called once every listener is open (the unit's sd_notify READY).
// Until first-boot setup is complete (Missing) it still opens its socket, so the box comes
// up, and answers every facilitator call 503 naming what is missing.
func Run(ctx context.Context, c Config, log *slog.Logger, ready func()) error {
	if ready == nil {
		ready = func() {}
	}
	if missing := c.Missing(); len(missing) > 0 {
		probe := c // what is present must still be valid
		probe.Payment.PayTo, probe.RPCURL = "0x0000000000000000000000000000000000000001", "http://setup.invalid"
		if err := probe.Validate(); err != nil {
			return err
		}
		ls, err := c.listen()
		if err != nil {
			return err
		}
		log.Warn("first-boot setup incomplete; the facilitator answers 503 until it is done", obs.KeyMissing, strings.Join(missing, "; "))
		ready()
		return Serve(ctx, SetupHandler(missing), log, ls...)
	}
	if err := c.Validate(); err != nil {
		return err
	}
	claim, _ := c.ClaimPolicy() // checked by Validate
	key, err := LoadKey(c.HotKeyFile)
	if err != nil {
		return fmt.Errorf("hot key: %w", err)
	}
	authorizer, err := receiverAuthorizer(c.Payment, key)
	if err != nil {
		return err
	}
	rpc, err := ethclient.DialContext(ctx, c.RPCURL)
	if err != nil {
		return fmt.Errorf("rpc: %w", err)
	}
	defer rpc.Close()
	p := c.Payment
	remote, err := remoteFacilitator(c.FacilitatorURL)
	if err != nil {
		return err
	}
	f, err := New(ctx, Options{Remote: remote,
		Network: p.Network, Asset: common.HexToAddress(p.Asset), TokenName: p.TokenName, TokenVersion: p.TokenVersion,
		PayTo: common.HexToAddress(p.PayTo), Backend: rpc, HotKey: key, LedgerDir: filepath.Join(c.StateDir, "ledger"),
		LedgerSync: journal.SyncAlways, ExposureCap: c.ExposureCap, TotalExposureCap: c.TotalExposureCap,
		SettleMargin: c.SettleMargin, Logger: log, Claim: claim, ReceiverAuthorizer: authorizer,
		SettleConcurrency: c.SettlementsInFlight,
		Sender: chain.SenderOptions{
			ReceiptTimeout: time.Duration(c.ReceiptTimeoutSeconds) * time.Second,
			ReplaceAfter:   time.Duration(c.ReplaceAfterSeconds) * time.Second,
		},
	})
	if err != nil {
		return err
	}
	defer f.Close()
	ls, err := c.listen()
	if err != nil {
		return err
	}
	log.Info("facilitator serving", obs.KeyNetwork, p.Network, obs.KeySigner, f.Signer().Hex(), obs.KeyPayTo, p.PayTo)
	ready()
	return Serve(ctx, f.Handler(), log, ls...)
}

// listen opens the Unix socket and the optional loopback TCP listener.
func (c Config) listen() ([]net.Listener, error) {
	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}
	if c.Socket != "" {
		if err := os.MkdirAll(filepath.Dir(c.Socket), 0o750); err != nil {
			return nil, err
		}
		l, err := ListenUnix(c.Socket)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	if c.Listen != "" {
		l, err := net.Listen("tcp", c.Listen)
		if err != nil {
			closeAll()
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// SetupHandler is the facilitator of a box whose first-boot setup is incomplete: /supported
// lists no kind (true: it can settle nothing yet), every other call is 503 naming what is
// missing.
func SetupHandler(missing []string) http.Handler {
	msg := "first-boot setup incomplete, missing: " + strings.Join(missing, "; ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/supported" {
			writeJSON(w, 200, x402.SupportedResponse{Kinds: []x402.SupportedKind{}})
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, errorBody{msg})
	})
}

// Payment is what is paid, where and to whom: the [payment] section of the configuration.
type Payment struct {
	Network      string // CAIP-2 network, e.g. eip155:8453
	Asset        string // USDC contract address
	TokenName    string // its EIP-712 domain name ("USD Coin" on Base)
	TokenVersion string // its EIP-712 domain version ("2")
	PayTo        string // where payments go: an address only, never a key
	// ReceiverAuthorizer, when set, offers batch-settlement: it must be the hot key's address,
	// which signs the channels' claims and refunds (a key of the box, like the gas it pays;
	// the payout key stays off the box either way).
	ReceiverAuthorizer string
}

// receiverAuthorizer is the key that signs batch-settlement claims and refunds: the hot key when
// payment.receiver_authorizer names its address, none (the scheme off) when that key is empty.
func receiverAuthorizer(p Payment, hot *ecdsa.PrivateKey) (*ecdsa.PrivateKey, error) {
	if p.ReceiverAuthorizer == "" {
		return nil, nil
	}
	if addr := crypto.PubkeyToAddress(hot.PublicKey); !common.IsHexAddress(p.ReceiverAuthorizer) || common.HexToAddress(p.ReceiverAuthorizer) != addr {
		return nil, fmt.Errorf("config key payment.receiver_authorizer: %q is not the hot key's address %s, which signs the claims", p.ReceiverAuthorizer, addr.Hex())
	}
	return hot, nil
}

// Validate names the [payment] key that is missing or wrong. An empty or zero payTo is an
// error: a box that would take payments for nobody must not start.
func (p Payment) Validate() error {
	var errs []error
	if !common.IsHexAddress(p.Asset) {
		errs = append(errs, fmt.Errorf("config key payment.asset: %q is not an address", p.Asset))
	}
	if err := CheckPayTo(p.PayTo); err != nil {
		errs = append(errs, fmt.Errorf("config key payment.pay_to: %w", err))
	}
	if p.TokenName == "" || p.TokenVersion == "" {
		errs = append(errs, errors.New("config key payment.token_name and payment.token_version: both are required"))
	}
	return errors.Join(errs...)
}

// remoteFacilitator is the client of payment.facilitator_url, or nil when none is set.
func remoteFacilitator(url string) (Remote, error) {
	if url == "" {
		return nil, nil
	}
	c, err := client.New(url)
	if err != nil {
		return nil, fmt.Errorf("config key payment.facilitator_url: %w", err)
	}
	return c, nil
}
