package settle

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/x402"
)

// Dev is the facilitator of `appliance dev`: an embedded chain with Circle's USDC, a funded
// demo payer, and the facilitator API on a Unix socket in the state directory.
type Dev struct {
	Chain        *devchain.Chain
	Facilitator  *Facilitator
	Socket       string // facilitator API (plus POST /dev/faucet)
	Network      string
	ChainID      uint64
	Asset        string // the USDC proxy's address
	TokenName    string
	TokenVersion string
	PayTo        string
	// ReceiverAuthorizer signs the batch-settlement claims and refunds of the dev chain's
	// channels; the API's 402 offers batch-settlement with it.
	ReceiverAuthorizer string
	PayerKey           string // path of the demo payer's private key (hex)
	Payer              string // demo payer's address
	// RPCURL is the embedded chain's JSON-RPC endpoint on loopback, which the chain routes of
	// `appliance dev` read as they would read Base.
	RPCURL string

	cancel context.CancelFunc
	served chan error
}

// DevOptions configure StartDevWith.
type DevOptions struct {
	StateDir string
	Logger   *slog.Logger
	// Claim is the background claimer's policy (DevClaimPolicy); a zero Interval runs none
	// (POST /dev/claim still claims on demand).
	Claim ClaimPolicy
	// FacilitatorURL, when set, is the standard x402 facilitator that verifies and settles
	// for the embedded one, which keeps the ledger (Options.Remote).
	FacilitatorURL string
}

// DevClaimInterval is how often `appliance dev`'s claimer looks at the channels when the
// configuration leaves settle.claim_interval_seconds at its production default: short enough
// that a dev user sees claims happen.
const DevClaimInterval = 30 * time.Second

// DevClaimPolicy is the claimer's policy of `appliance dev`: the configured one, except that an
// interval and minimums left at their production defaults (5 minutes, 2.5 USDC a round, 0.5 USDC
// a channel: a dev user would wait long for a claim) become DevClaimInterval and no minimum.
func DevClaimPolicy(c Config) (ClaimPolicy, error) {
	def := DefaultConfig()
	if c.ClaimIntervalSeconds == def.ClaimIntervalSeconds {
		c.ClaimIntervalSeconds = int(DevClaimInterval / time.Second)
	}
	if c.ClaimMinValue == def.ClaimMinValue {
		c.ClaimMinValue = 0
	}
	if c.ClaimMinChannelValue == def.ClaimMinChannelValue {
		c.ClaimMinChannelValue = 0
	}
	return c.ClaimPolicy()
}

// StartDev starts the embedded chain and an in-process facilitator whose state lives under
// stateDir, with no background claimer; Close stops both.
func StartDev(ctx context.Context, stateDir string, log *slog.Logger) (*Dev, error) {
	return StartDevWith(ctx, DevOptions{StateDir: stateDir, Logger: log})
}

// StartDevWith is StartDev with options. payTo is a fresh address whose key is discarded: on
// the dev chain, only balances matter.
func StartDevWith(ctx context.Context, o DevOptions) (*Dev, error) {
	stateDir, log := o.StateDir, o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	ch, err := devchain.Start(ctx, devchain.Options{HTTP: true})
	if err != nil {
		return nil, err
	}
	payToKey, err := crypto.GenerateKey()
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	payTo := crypto.PubkeyToAddress(payToKey.PublicKey)
	// The batch-settlement receiver authorizer of the dev chain, as fresh as the chain.
	authorizer, err := crypto.GenerateKey()
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	// A fresh chain means fresh nonces: an old ledger would describe payments that do not exist.
	ledgerDir := filepath.Join(stateDir, "dev-ledger")
	_ = os.RemoveAll(ledgerDir)
	remote, err := remoteFacilitator(o.FacilitatorURL)
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	f, err := New(ctx, Options{Remote: remote,
		Network: devchain.Network, Asset: ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: payTo, Backend: ch.Client(), HotKey: ch.Hot, LedgerDir: ledgerDir, LedgerSync: journal.SyncAlways,
		ExposureCap: 10_000_000, Logger: log, ReceiverAuthorizer: authorizer, Claim: o.Claim,
		Sender: chain.SenderOptions{PollInterval: 10 * time.Millisecond, ReceiptTimeout: 20 * time.Second, ReplaceAfter: 5 * time.Second},
	})
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	keyPath := filepath.Join(stateDir, "dev-payer.key")
	if err := os.WriteFile(keyPath, []byte(hex.EncodeToString(crypto.FromECDSA(ch.Payer))+"\n"), 0o600); err != nil {
		_ = f.Close()
		_ = ch.Close()
		return nil, err
	}
	sock := filepath.Join(stateDir, "settle.sock")
	l, err := ListenUnix(sock)
	if err != nil {
		_ = f.Close()
		_ = ch.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", f.Handler())
	mux.Handle("POST /dev/faucet", FaucetHandler(ch))
	mux.Handle("POST /dev/claim", ClaimHandler(f, ch, payTo))
	mux.HandleFunc("GET /dev/chain", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]string{"rpc_url": ch.RPCURL, "network": devchain.Network, "asset": ch.USDC.Hex(),
			"pay_to": payTo.Hex(), "receiver_authorizer": f.ReceiverAuthorizer().Hex()})
	})
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d := &Dev{Chain: ch, Facilitator: f, Socket: sock, Network: devchain.Network, ChainID: devchain.ChainID,
		Asset: ch.USDC.Hex(), TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion, PayTo: payTo.Hex(),
		ReceiverAuthorizer: f.ReceiverAuthorizer().Hex(), PayerKey: keyPath, Payer: ch.PayerAddress().Hex(), RPCURL: ch.RPCURL, cancel: cancel, served: make(chan error, 1)}
	go func() { d.served <- Serve(sctx, mux, log, l) }()
	return d, nil
}

// Addr is the facilitator address for settle/client.New.
func (d *Dev) Addr() string { return "unix:" + d.Socket }

// HowToPay is the text `appliance dev` prints.
func (d *Dev) HowToPay(baseURL string) string {
	return fmt.Sprintf(`Embedded chain %s (USDC %s, EIP-712 %q v%s); payments go to %s.
Demo payer %s holds %d.%06d USDC; its key is in %s.
Pay for a call:   appliance pay --key %s GET %s/v1/fr/tva siren=542065479
Top up any address (dev only): curl --unix-socket %s -d '{"address":"0x...","amount":"10000000"}' http://settle/dev/faucet
Batch-settlement (receiver authorizer %s): %s; claim and sweep now: curl --unix-socket %s -X POST http://settle/dev/claim
`, d.Network, d.Asset, d.TokenName, d.TokenVersion, d.PayTo, d.Payer, devchain.PayerFunds/1_000_000, devchain.PayerFunds%1_000_000,
		d.PayerKey, d.PayerKey, strings.TrimRight(baseURL, "/"), d.Socket, d.ReceiverAuthorizer, d.claimerText(), d.Socket)
}

func (d *Dev) claimerText() string {
	p := d.Facilitator.o.Claim
	if p.Interval == 0 {
		return "no background claimer"
	}
	return fmt.Sprintf("the claimer claims and sweeps every %s once %d atomic units are unclaimed (settle.claim_interval_seconds, settle.claim_min_value)", p.Interval, p.MinClaimable)
}

// Close stops the facilitator and the chain.
func (d *Dev) Close() error {
	d.cancel()
	err := <-d.served
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, d.Facilitator.Close(), d.Chain.Close())
}

// ClaimHandler runs one claim round now whatever the policy's threshold (POST): every
// channel's charges claimed in one claimWithSignature, then swept to payTo in one transfer. It
// answers the round's report and payTo's token balance on chain after it. Dev only: production
// claims on the claimer's own schedule.
func ClaimHandler(f *Facilitator, ch *devchain.Chain, payTo common.Address) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep, err := f.ClaimOnce(r.Context(), ClaimPolicy{})
		if err != nil {
			writeJSON(w, 503, errorBody{"claim round failed: " + err.Error()})
			return
		}
		bal, err := ch.Balance(r.Context(), payTo)
		if err != nil {
			writeJSON(w, 503, errorBody{err.Error()})
			return
		}
		writeJSON(w, 200, map[string]any{"channels": rep.Channels, "in_flight": rep.InFlight, "claimed": rep.Claimed.String(), "claim_tx": rep.ClaimTx,
			"claim_gas": rep.ClaimGas, "swept": rep.Swept.String(), "sweep_tx": rep.SweepTx, "sweep_gas": rep.SweepGas,
			"pay_to": payTo.Hex(), "pay_to_balance": bal.String()})
	})
}

type faucetRequest struct {
	Address string `json:"address"`
	Amount  string `json:"amount"` // atomic units; at most devchain.FaucetMax
}

// FaucetHandler mints USDC on the dev chain (POST {"address","amount"}). Dev only: a
// production facilitator has no minter.
func FaucetHandler(ch *devchain.Chain) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req faucetRequest
		if !readJSON(w, r, &req) {
			return
		}
		amount, err := parseAmount(req.Amount)
		if err != nil || amount == 0 || amount > devchain.FaucetMax {
			writeJSON(w, 400, errorBody{fmt.Sprintf("amount must be 1 to %d atomic units", devchain.FaucetMax)})
			return
		}
		if !common.IsHexAddress(req.Address) {
			writeJSON(w, 400, errorBody{"address is not an address"})
			return
		}
		to := common.HexToAddress(req.Address)
		if err := ch.Mint(r.Context(), to, amount); err != nil {
			writeJSON(w, 503, errorBody{"mint failed: " + err.Error()})
			return
		}
		bal, err := ch.Balance(r.Context(), to)
		if err != nil {
			writeJSON(w, 503, errorBody{err.Error()})
			return
		}
		writeJSON(w, 200, map[string]string{"address": to.Hex(), "minted": req.Amount, "balance": bal.String(), "network": x402.CAIP2(devchain.Network)})
	})
}

func parseAmount(s string) (uint64, error) {
	var n uint64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return 0, err
	}
	return n, nil
}
