// Command devchain serves the embedded dev chain (settle/devchain: Circle's USDC with Base's
// EIP-712 domain, a funded gas key) over JSON-RPC on a loopback port, for an appliance running
// elsewhere: image-test boots the image under QEMU and points the box's settle daemon at it
// (QEMU's user network shows the host's loopback to the guest as 10.0.2.2).
//
// It writes two files and then serves until interrupted: -env, the PEAGE_* settings that point
// an appliance at this chain (network, token, a fresh payout address, the RPC URL as the
// appliance sees it, rewritten with -rpc-host), and -hot-key, the chain's funded gas key in
// hex, for the settle daemon's hot-key credential.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/devchain"
)

func main() {
	envPath := flag.String("env", "", "file to write the PEAGE_* settings into (required)")
	keyPath := flag.String("hot-key", "", "file to write the gas-paying key into, hex (required)")
	rpcHost := flag.String("rpc-host", "", "host the appliance reaches this machine's loopback as (e.g. 10.0.2.2 from a QEMU guest); default the loopback address itself")
	flag.Parse()
	if *envPath == "" || *keyPath == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *envPath, *keyPath, *rpcHost); err != nil {
		fmt.Fprintln(os.Stderr, "devchain:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, envPath, keyPath, rpcHost string) error {
	ch, err := devchain.Start(ctx, devchain.Options{HTTP: true})
	if err != nil {
		return err
	}
	defer ch.Close()
	rpc, err := url.Parse(ch.RPCURL)
	if err != nil {
		return err
	}
	if rpcHost != "" {
		rpc.Host = rpcHost + ":" + rpc.Port()
	}
	payTo, err := randomAddress()
	if err != nil {
		return err
	}
	env := strings.Join([]string{
		"PEAGE_PAYMENT_NETWORK=" + devchain.Network,
		"PEAGE_PAYMENT_ASSET=" + ch.USDC.Hex(),
		"PEAGE_PAYMENT_TOKEN_NAME=" + devchain.TokenName,
		"PEAGE_PAYMENT_TOKEN_VERSION=" + devchain.TokenVersion,
		"PEAGE_PAYMENT_PAY_TO=" + payTo,
		"PEAGE_SETTLE_RPC_URL=" + rpc.String(),
	}, "\n") + "\n"
	if err := os.WriteFile(envPath, []byte(env), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, []byte(hex.EncodeToString(crypto.FromECDSA(ch.Hot))+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "devchain: JSON-RPC on %s (chain %d, USDC %s), appliance settings in %s\n",
		ch.RPCURL, devchain.ChainID, ch.USDC.Hex(), envPath)
	<-ctx.Done()
	return nil
}

// randomAddress is a fresh payout address; on the dev chain only balances matter, so no key is
// kept for it.
func randomAddress() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "0x" + hex.EncodeToString(b), nil
}
