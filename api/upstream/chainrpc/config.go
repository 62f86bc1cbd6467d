package chainrpc

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ENS deployments: ENS's registry on Ethereum mainnet, and the Basenames registry on Base
// mainnet (names under base.eth).
const (
	ENSRegistry       = "0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e"
	BasenamesRegistry = "0xb94704422c2a1e396835a571837aa5ae53285a95"
)

// BaseUSDC is Circle's USDC on Base mainnet, the token every balance includes.
const BaseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

// Config is the [chain] section of the appliance config.
type Config struct {
	RPC               string        `toml:"rpc" doc:"JSON-RPC endpoint (http or https) of the chain the chain routes read, e.g. https://mainnet.base.org (public, rate-limited) or a provider URL; several, comma-separated, are tried in order when one fails or throttles; empty: the chain routes are unavailable (appliance dev reads its embedded chain)"`
	USDC              string        `toml:"usdc" doc:"USDC contract address on that chain (always included in balances, default token of allowances)"`
	RatePerSecond     float64       `toml:"rate_per_second" doc:"HTTP requests per second sent to each endpoint (a batch of calls is one request); public endpoints throttle bursts"`
	Burst             int           `toml:"burst" doc:"requests the rate limit lets through at once"`
	Timeout           time.Duration `toml:"timeout" doc:"how long one request to the endpoint may take"`
	MaxBatch          int           `toml:"max_batch" doc:"most JSON-RPC calls sent in one batch; some providers refuse larger batches (a balance of 10 tokens is 36 calls)"`
	Indexer           bool          `toml:"indexer" doc:"read /v1/chain/address history from the blockscout upstream (Etherscan-compatible API, base.blockscout.com by default: Base mainnet); false reads the chain's logs over the last logs_max_blocks blocks and the answer declares the truncation (appliance dev turns it off on its embedded chain)"`
	ENSRPC            string        `toml:"ens_rpc" doc:"JSON-RPC endpoint(s) of Ethereum mainnet, where ENS lives (e.g. https://ethereum-rpc.publicnode.com), tried in order like rpc; empty: /v1/chain/ens is unavailable"`
	ENSRegistry       string        `toml:"ens_registry" doc:"ENS registry on that chain"`
	BasenamesRegistry string        `toml:"basenames_registry" doc:"Basenames registry on the chain of rpc (Base), for *.base.eth names and Base primary names; empty leaves Basenames out (appliance dev does on its embedded chain)"`
	LogsMaxBlocks     uint64        `toml:"logs_max_blocks" doc:"widest eth_getLogs block range the endpoint accepts (10,000 at most providers; 2 s Base blocks make it 5.5 hours), the window of /v1/chain/address without an indexer"`
}

// DefaultConfig names no endpoint: the routes stay unavailable until the operator picks one.
// The rate suits Base's public endpoint, which publishes no figure and answers 429 to bursts.
func DefaultConfig() Config {
	return Config{USDC: BaseUSDC, RatePerSecond: 5, Burst: 10, Timeout: 10 * time.Second, MaxBatch: 50, Indexer: true, LogsMaxBlocks: 10_000,
		ENSRegistry: ENSRegistry, BasenamesRegistry: BasenamesRegistry}
}

// Endpoints lists the URLs of RPC in the order they are tried.
func (c Config) Endpoints() []string {
	var out []string
	for _, s := range strings.Split(c.RPC, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Validate reports the first bad key, named as in the config file.
func (c Config) Validate() error {
	for _, e := range c.Endpoints() {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("chain.rpc: want http or https URLs, comma-separated")
		}
	}
	if err := CheckAddress(c.USDC); err != nil {
		return fmt.Errorf("chain.usdc: %w", err)
	}
	if c.RatePerSecond <= 0 {
		return errors.New("chain.rate_per_second: must be positive")
	}
	if c.Burst < 1 {
		return errors.New("chain.burst: must be at least 1")
	}
	if c.MaxBatch < 1 {
		return errors.New("chain.max_batch: must be at least 1")
	}
	for _, e := range (Config{RPC: c.ENSRPC}).Endpoints() {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("chain.ens_rpc: want http or https URLs, comma-separated")
		}
	}
	if err := CheckAddress(c.ENSRegistry); err != nil {
		return fmt.Errorf("chain.ens_registry: %w", err)
	}
	if c.BasenamesRegistry != "" {
		if err := CheckAddress(c.BasenamesRegistry); err != nil {
			return fmt.Errorf("chain.basenames_registry: %w", err)
		}
	}
	if c.LogsMaxBlocks < 1 {
		return errors.New("chain.logs_max_blocks: must be at least 1")
	}
	if c.Timeout <= 0 {
		return errors.New("chain.timeout: must be positive")
	}
	return nil
}
