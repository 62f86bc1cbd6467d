// Package devchain runs the embedded EVM chain of `appliance dev` and of the tests: go-ethereum's
// simulated backend with Circle's USDC (FiatToken v2.2 behind its proxy, settle/fiattoken)
// deployed as Circle deploys it, the batch-settlement contracts at their
// canonical addresses, a funded demo payer, a gas-paying hot key, and
// a dev-only faucet. Transactions are mined as they arrive (automine) unless the caller asks to
// mine by hand, which tests use to hold a transaction between broadcast and receipt.
package devchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/fiattoken"
	"github.com/peage/appliance/settle/usdc"
)

// The token's EIP-712 domain: the same name and version as USDC on Base mainnet, so the dev
// chain exercises the production domain strings.
const (
	TokenName    = "USD Coin"
	TokenVersion = "2"
	ChainID      = 1337 // the simulated backend's fixed chain id
	Network      = "eip155:1337"
)

// PayerFunds is what the demo payer starts with: 1000 USDC in atomic units.
const PayerFunds = 1_000_000_000

// FaucetMax caps one faucet grant: 100 USDC.
const FaucetMax = 100_000_000

// Options configure a chain.
type Options struct {
	// ManualMine disables automine: blocks are sealed only by Commit.
	ManualMine bool
	// HTTP also serves JSON-RPC on a loopback port (for child processes in tests).
	HTTP bool
	// Keys, when set, fix the accounts (deterministic tests); otherwise fresh keys are made.
	Deployer, Payer, Hot *ecdsa.PrivateKey
}

// Chain is a running embedded chain.
type Chain struct {
	sim      *simulated.Backend
	client   simulated.Client
	Deployer *ecdsa.PrivateKey // deploys the token and holds its roles (owner, master minter, minter: the faucet)
	Payer    *ecdsa.PrivateKey // the demo payer, funded with PayerFunds
	Hot      *ecdsa.PrivateKey // the facilitator's gas-paying key
	USDC     common.Address    // the token's proxy
	// ProxyAdmin administers the token's proxy (upgrades); Circle keeps it apart from every
	// other role because the proxy does not forward its calls to the token.
	ProxyAdmin common.Address
	RPCURL     string // "" unless Options.HTTP

	mintMu sync.Mutex
	// sealMu serialises the blocks sealed by automine, Commit and AdjustTime: go-ethereum's
	// simulated beacon keeps its last block time unguarded, so two seals at once race.
	sealMu sync.Mutex
	auto   *automine
}

// Start creates the chain, deploys Circle's USDC and funds the demo payer. The token's
// artifacts come from settle/npm (fiattoken.Locate); without them Start fails.
func Start(ctx context.Context, o Options) (*Chain, error) {
	keys := []*ecdsa.PrivateKey{o.Deployer, o.Payer, o.Hot}
	for i := range keys {
		if keys[i] == nil {
			k, err := crypto.GenerateKey()
			if err != nil {
				return nil, err
			}
			keys[i] = k
		}
	}
	eth := new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil) // a million ether each: gas is never the test's problem
	alloc := types.GenesisAlloc{}
	for _, k := range keys {
		alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: eth}
	}
	// The batch-settlement contracts sit at the scheme's canonical addresses, as on Base, so
	// the official client works unchanged.
	alloc[batch.SettlementAddress] = types.Account{Code: common.FromHex(strings.TrimSpace(usdc.BatchSettlementRuntime)), Balance: new(big.Int)}
	alloc[batch.ERC3009CollectorAddress] = types.Account{Code: common.FromHex(strings.TrimSpace(usdc.DepositCollectorRuntime)), Balance: new(big.Int)}
	// go-ethereum's dev chain starts on every fork it knows, Bogota included, whose EIP-8037
	// and EIP-8038 reprice state writes and reads (a USDC transfer costs about 2.5 times what
	// it costs on Base). Base runs the OP Stack's Osaka rules: the chain stops there, so the
	// gas the benches report is Base's.
	opts := []func(*node.Config, *ethconfig.Config){func(_ *node.Config, ec *ethconfig.Config) {
		cfg := *ec.Genesis.Config
		cfg.AmsterdamTime, cfg.BogotaTime = nil, nil
		ec.Genesis.Config = &cfg
	}}
	rpcURL := ""
	if o.HTTP {
		// The simulated backend hides its node, so the port is chosen here rather than read back.
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		rpcURL = fmt.Sprintf("http://127.0.0.1:%d", port)
		opts = append(opts, func(nc *node.Config, _ *ethconfig.Config) {
			nc.HTTPHost = "127.0.0.1"
			nc.HTTPPort = port
			nc.HTTPVirtualHosts = []string{"*"}
			nc.HTTPModules = []string{"eth", "net", "web3"}
		})
	}
	dir, err := fiattoken.Locate()
	if err != nil {
		return nil, err
	}
	admin, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	sim := simulated.NewBackend(alloc, opts...)
	c := &Chain{sim: sim, Deployer: keys[0], Payer: keys[1], Hot: keys[2], ProxyAdmin: crypto.PubkeyToAddress(admin.PublicKey)}
	c.client = sim.Client()
	// The token goes in before automine starts, its dozen transactions sealed in one block:
	// a block each would run chain time seconds ahead of the clock.
	if err := c.deploy(ctx, dir); err != nil {
		_ = sim.Close()
		return nil, err
	}
	if !o.ManualMine {
		c.auto = newAutomine(sim.Client(), func() uint64 {
			c.seal()
			h, err := sim.Client().HeaderByNumber(context.Background(), nil)
			if err != nil {
				return uint64(time.Now().Unix())
			}
			return h.Time
		})
		c.client = c.auto
	}
	c.RPCURL = rpcURL
	if err := c.Mint(ctx, c.PayerAddress(), PayerFunds); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("fund payer: %w", err)
	}
	return c, nil
}

// Client is the chain's RPC client (automining unless ManualMine).
func (c *Chain) Client() simulated.Client { return c.client }

// Commit seals a block with the pending transactions.
func (c *Chain) Commit() { c.seal() }

func (c *Chain) seal() {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	c.sim.Commit()
}

// AdjustTime moves chain time forward by d and seals a block (tests of timed withdrawals);
// automine then paces blocks against the wall clock shifted by the same amount.
func (c *Chain) AdjustTime(d time.Duration) error {
	c.sealMu.Lock()
	err := c.adjustTime(d)
	c.sealMu.Unlock()
	if err != nil {
		return err
	}
	if c.auto != nil {
		c.auto.skew.Add(int64(d / time.Second))
	}
	return nil
}

// adjustTime is AdjustTime under sealMu. The simulated beacon refuses to move time while a
// transaction waits in the pool, and one can arrive at any moment (automine seals only on its
// tick), so the waiting ones are sealed first at the old time and the move is tried again.
func (c *Chain) adjustTime(d time.Duration) error {
	var err error
	for range 20 {
		if err = c.sim.AdjustTime(d); err == nil || !strings.Contains(err.Error(), "non-empty block") {
			return err
		}
		c.sim.Commit()
	}
	return err
}

// Fork makes parent the chain's head: the blocks after it leave the canonical chain and the
// next block is sealed on parent (tests of reorgs).
func (c *Chain) Fork(parent common.Hash) error {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	return c.sim.Fork(parent)
}

// Close stops the chain.
func (c *Chain) Close() error {
	if c.auto != nil {
		c.auto.close()
	}
	return c.sim.Close()
}

// PayerAddress is the demo payer's address.
func (c *Chain) PayerAddress() common.Address { return crypto.PubkeyToAddress(c.Payer.PublicKey) }

// HotAddress is the facilitator key's address.
func (c *Chain) HotAddress() common.Address { return crypto.PubkeyToAddress(c.Hot.PublicKey) }

func (c *Chain) deploy(ctx context.Context, dir string) error {
	me := crypto.PubkeyToAddress(c.Deployer.PublicKey)
	d, err := fiattoken.Deploy(ctx, c.sim.Client(), c.Deployer, big.NewInt(ChainID), dir,
		fiattoken.Metadata{Name: TokenName, Symbol: "USDC", Currency: "USD", Decimals: 6},
		fiattoken.Roles{ProxyAdmin: c.ProxyAdmin, MasterMinter: me, Pauser: me, Blacklister: me, Owner: me, LostAndFound: me, Minter: me},
		c.seal)
	if err != nil {
		return fmt.Errorf("deploy USDC: %w", err)
	}
	c.USDC = d.Proxy
	return nil
}

// DeployWallet deploys an ERC-1271 test wallet owned by owner (for smart-wallet payments).
func (c *Chain) DeployWallet(ctx context.Context, owner common.Address) (common.Address, error) {
	c.mintMu.Lock()
	defer c.mintMu.Unlock()
	opts := bind.NewKeyedTransactor(c.Deployer, big.NewInt(ChainID))
	opts.Context = ctx
	addr, tx, err := bind.DeployContract(opts, common.FromHex(usdc.TestWalletMetaData.Bin), c.client, usdc.NewTestWallet().PackConstructor(owner))
	if err != nil {
		return common.Address{}, err
	}
	return addr, c.mined(ctx, tx)
}

// Mint is the faucet: the deployer, the token's minter, mints amount atomic units for to.
// (FiatToken's mint has the test USDC's signature, so its binding encodes the call.)
func (c *Chain) Mint(ctx context.Context, to common.Address, amount uint64) error {
	c.mintMu.Lock()
	defer c.mintMu.Unlock()
	opts := bind.NewKeyedTransactor(c.Deployer, big.NewInt(ChainID))
	opts.Context = ctx
	inst := usdc.NewTestUSDC().Instance(c.client, c.USDC)
	tx, err := inst.Transact(opts, "mint", to, new(big.Int).SetUint64(amount))
	if err != nil {
		return err
	}
	return c.mined(ctx, tx)
}

// CancelAuthorization submits the payer-signed cancellation of an EIP-3009 nonce, as a payer
// who wants a signed authorization back would (tests use it mid-call).
func (c *Chain) CancelAuthorization(ctx context.Context, authorizer common.Address, nonce common.Hash, sig []byte) error {
	c.mintMu.Lock()
	defer c.mintMu.Unlock()
	opts := bind.NewKeyedTransactor(c.Deployer, big.NewInt(ChainID))
	opts.Context = ctx
	inst := usdc.NewTestUSDC().Instance(c.client, c.USDC)
	tx, err := inst.Transact(opts, "cancelAuthorization", authorizer, nonce, sig)
	if err != nil {
		return err
	}
	return c.mined(ctx, tx)
}

// Balance reads the USDC balance of who.
func (c *Chain) Balance(ctx context.Context, who common.Address) (*big.Int, error) {
	return chain.Reader{B: c.client}.BalanceOf(ctx, c.USDC, who)
}

// mined waits for tx's receipt and for the head to reach its block (go-ethereum indexes a
// block's transactions just before it moves the head), sealing a block first when mining is
// manual: setup transactions must land before the chain is handed out.
func (c *Chain) mined(ctx context.Context, tx *types.Transaction) error {
	if c.auto == nil {
		c.seal()
	}
	for {
		r, err := c.client.TransactionReceipt(ctx, tx.Hash())
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
			}
			if head, err := c.client.BlockNumber(ctx); err == nil && head >= r.BlockNumber.Uint64() {
				return nil
			}
		} else if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "indexing is in progress") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// maxAhead bounds how far block timestamps may run ahead of the wall clock. A block's
// timestamp is at least its parent's plus one second, so sealing a block per transaction in a
// burst would push chain time past the authorizations' validBefore; beyond this budget, blocks
// wait for the clock and carry every transaction that arrived meanwhile.
const maxAhead = 3

// automine seals blocks as transactions arrive, like a fast L2: at once while chain time is
// within maxAhead of the wall clock, else as soon as the clock has caught up.
type automine struct {
	simulated.Client
	commit func() uint64 // seals a block, returns its timestamp
	skew   atomic.Int64  // seconds AdjustTime moved chain time ahead of the wall clock
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func newAutomine(c simulated.Client, commit func() uint64) *automine {
	a := &automine{Client: c, commit: commit, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

func (a *automine) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	if err := a.Client.SendTransaction(ctx, tx); err != nil {
		return err
	}
	select {
	case a.kick <- struct{}{}:
	default:
	}
	return nil
}

func (a *automine) loop() {
	defer close(a.done)
	// Transactions can also arrive over the HTTP RPC endpoint, past SendTransaction: look at
	// the pool now and then as well.
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	var last int64
	for {
		select {
		case <-a.stop:
			return
		case <-a.kick:
		case <-poll.C:
			if n, err := a.Client.PendingTransactionCount(context.Background()); err != nil || n == 0 {
				continue
			}
		}
		if wait := time.Until(time.Unix(last-a.skew.Load()-maxAhead+1, 0)); wait > 0 {
			select {
			case <-a.stop:
				return
			case <-time.After(wait):
			}
		}
		last = int64(a.commit())
	}
}

func (a *automine) close() {
	close(a.stop)
	<-a.done
}
