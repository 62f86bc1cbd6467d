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

// Config is the settle daemon's part of the appliance configuration.
type Config struct {
	Network      string `toml:"network"`       // CAIP-2 network, e.g. eip155:8453
	RPCURL       string `toml:"rpc_url"`       // JSON-RPC endpoint of that network
	Asset        string `toml:"asset"`         // USDC contract address
	TokenName    string `toml:"token_name"`    // its EIP-712 domain name ("USD Coin" on Base)
	TokenVersion string `toml:"token_version"` // its EIP-712 domain version ("2")
	PayTo        string `toml:"pay_to"`        // where payments go: an address only, never a key
	// HotKeyFile holds the gas-paying key (hex). A bare name is looked up in
	// $CREDENTIALS_DIRECTORY (systemd LoadCredential=).
	HotKeyFile string `toml:"hot_key_file"`
	Socket     string `toml:"socket"` // Unix socket of the facilitator API
	Listen     string `toml:"listen"` // optional loopback TCP address, e.g. 127.0.0.1:8402
	StateDir   string `toml:"state_dir"`
	// ExposureCap is the most one payer may owe for optimistic calls not yet settled (atomic units).
	ExposureCap           uint64 `toml:"exposure_cap"`
	ReceiptTimeoutSeconds int    `toml:"receipt_timeout_seconds"`
	ReplaceAfterSeconds   int    `toml:"replace_after_seconds"`
}

// DefaultConfig is Base mainnet USDC; PayTo, RPCURL and the hot key must be configured.
func DefaultConfig() Config {
	return Config{
		Network: "eip155:8453", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		TokenName: "USD Coin", TokenVersion: "2",
		HotKeyFile: "settle-hot-key", Socket: "/run/peage/settle.sock", StateDir: "/var/lib/peage/settle",
		ExposureCap: 1_000_000, ReceiptTimeoutSeconds: 90, ReplaceAfterSeconds: 30,
	}
}

// Validate reports what is missing or wrong, naming the key.
func (c Config) Validate() error {
	var errs []error
	if c.RPCURL == "" {
		errs = append(errs, errors.New("settle.rpc_url is required"))
	}
	if !common.IsHexAddress(c.Asset) {
		errs = append(errs, fmt.Errorf("settle.asset %q is not an address", c.Asset))
	}
	if !common.IsHexAddress(c.PayTo) || common.HexToAddress(c.PayTo) == (common.Address{}) {
		errs = append(errs, fmt.Errorf("settle.pay_to %q is not an address", c.PayTo))
	}
	if c.TokenName == "" || c.TokenVersion == "" {
		errs = append(errs, errors.New("settle.token_name and settle.token_version are required"))
	}
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
	f, err := New(ctx, Options{
		Network: c.Network, Asset: common.HexToAddress(c.Asset), TokenName: c.TokenName, TokenVersion: c.TokenVersion,
		PayTo: common.HexToAddress(c.PayTo), Backend: rpc, HotKey: key, LedgerDir: filepath.Join(c.StateDir, "ledger"),
		LedgerSync: journal.SyncAlways, ExposureCap: c.ExposureCap, Logger: log,
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
	log.Info("facilitator serving", "network", c.Network, "signer", f.Signer().Hex(), "pay_to", c.PayTo)
	return Serve(ctx, f.Handler(), log, ls...)
}
