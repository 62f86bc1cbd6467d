package settle

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/peage/appliance/appliance/journal"
	"github.com/peage/appliance/settle/chain"
)

// Config is the settle daemon's part of the appliance configuration. What is paid, where and
// to whom (network, asset, token domain, payTo) has one source, the [payment] section, which
// the API's challenges are derived from as well; the daemon gets it through Payment.
type Config struct {
	Payment Payment `toml:"-"`
	RPCURL  string  `toml:"rpc_url"` // JSON-RPC endpoint of the payment network
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
}

// DefaultConfig is Base mainnet USDC; PayTo, RPCURL and the hot key must be configured.
func DefaultConfig() Config {
	return Config{
		HotKeyFile: "settle-hot-key", Socket: "/run/peage/settle.sock", StateDir: "/var/lib/peage/settle",
		ExposureCap: 1_000_000, TotalExposureCap: 20_000_000, SettleMargin: DefaultSettleMargin,
		ReceiptTimeoutSeconds: 90, ReplaceAfterSeconds: 30,
	}
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
	return errors.Join(errs...)
}

// LoadKey reads a hex private key from path (a bare name is looked up in $CREDENTIALS_DIRECTORY).
func LoadKey(path string) (*ecdsa.PrivateKey, error) {
	if !strings.ContainsRune(path, os.PathSeparator) {
		if dir := os.Getenv("CREDENTIALS_DIRECTORY"); dir != "" {
			path = filepath.Join(dir, path)
		}
	}
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

// Run is the standalone daemon (`appliance settle`): it serves the facilitator until ctx ends.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	if err := c.Validate(); err != nil {
		return err
	}
	key, err := LoadKey(c.HotKeyFile)
	if err != nil {
		return fmt.Errorf("hot key: %w", err)
	}
	rpc, err := ethclient.DialContext(ctx, c.RPCURL)
	if err != nil {
		return fmt.Errorf("rpc: %w", err)
	}
	defer rpc.Close()
	p := c.Payment
	f, err := New(ctx, Options{
		Network: p.Network, Asset: common.HexToAddress(p.Asset), TokenName: p.TokenName, TokenVersion: p.TokenVersion,
		PayTo: common.HexToAddress(p.PayTo), Backend: rpc, HotKey: key, LedgerDir: filepath.Join(c.StateDir, "ledger"),
		LedgerSync: journal.SyncAlways, ExposureCap: c.ExposureCap, TotalExposureCap: c.TotalExposureCap,
		SettleMargin: c.SettleMargin, Logger: log,
		Sender: chain.SenderOptions{
			ReceiptTimeout: time.Duration(c.ReceiptTimeoutSeconds) * time.Second,
			ReplaceAfter:   time.Duration(c.ReplaceAfterSeconds) * time.Second,
		},
	})
	if err != nil {
		return err
	}
	defer f.Close()
	var ls []net.Listener
	if c.Socket != "" {
		if err := os.MkdirAll(filepath.Dir(c.Socket), 0o750); err != nil {
			return err
		}
		l, err := ListenUnix(c.Socket)
		if err != nil {
			return err
		}
		ls = append(ls, l)
	}
	if c.Listen != "" {
		l, err := net.Listen("tcp", c.Listen)
		if err != nil {
			return err
		}
		ls = append(ls, l)
	}
	log.Info("facilitator serving", "network", p.Network, "signer", f.Signer().Hex(), "pay_to", p.PayTo)
	return Serve(ctx, f.Handler(), log, ls...)
}

// Payment is what is paid, where and to whom: the [payment] section of the configuration.
type Payment struct {
	Network      string // CAIP-2 network, e.g. eip155:8453
	Asset        string // USDC contract address
	TokenName    string // its EIP-712 domain name ("USD Coin" on Base)
	TokenVersion string // its EIP-712 domain version ("2")
	PayTo        string // where payments go: an address only, never a key
}

// Validate names the [payment] key that is missing or wrong. An empty or zero payTo is an
// error: a box that would take payments for nobody must not start.
func (p Payment) Validate() error {
	var errs []error
	if !common.IsHexAddress(p.Asset) {
		errs = append(errs, fmt.Errorf("config key payment.asset: %q is not an address", p.Asset))
	}
	if !common.IsHexAddress(p.PayTo) || common.HexToAddress(p.PayTo) == (common.Address{}) {
		errs = append(errs, fmt.Errorf("config key payment.pay_to: %q is not a non-zero 0x address (only the address: the payout key never lives on the box)", p.PayTo))
	}
	if p.TokenName == "" || p.TokenVersion == "" {
		errs = append(errs, errors.New("config key payment.token_name and payment.token_version: both are required"))
	}
	return errors.Join(errs...)
}
