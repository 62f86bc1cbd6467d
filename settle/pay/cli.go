package pay

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle"
)

// Main is `appliance pay --key FILE [GET|POST] URL [name=value ...]`: it prints the response
// body on stdout and the decoded receipt on stderr, and fails on any non-2xx answer.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("key", "", "file holding the payer's private key (hex)")
	max := fs.Uint64("max", 0, "refuse to pay more than this many atomic units (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if *keyFile == "" || len(rest) == 0 {
		return fmt.Errorf("usage: appliance pay --key FILE [GET|POST] URL [name=value ...]")
	}
	key, err := settle.LoadKey(*keyFile)
	if err != nil {
		return err
	}
	r := Request{Method: http.MethodGet, Params: map[string]string{}}
	if m := strings.ToUpper(rest[0]); m == http.MethodGet || m == http.MethodPost {
		r.Method, rest = m, rest[1:]
	}
	if len(rest) == 0 {
		return fmt.Errorf("pay: no URL")
	}
	r.URL = rest[0]
	for _, kv := range rest[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("pay: parameter %q is not name=value", kv)
		}
		r.Params[k] = v
	}
	c := &Client{Key: key, MaxAmount: *max}
	fmt.Fprintf(stderr, "payer %s\n", crypto.PubkeyToAddress(key.PublicKey).Hex())
	res, err := c.Do(ctx, r)
	if err != nil && res == nil {
		return err
	}
	if _, werr := stdout.Write(res.Body); werr != nil {
		return werr
	}
	if res.Paid != nil {
		fmt.Fprintf(stderr, "paid %s atomic units of %s on %s to %s\n", res.Paid.Amount, res.Paid.Asset, res.Paid.Network, res.Paid.PayTo)
	}
	if res.Receipt != nil {
		b, _ := json.MarshalIndent(res.Receipt, "", "  ")
		fmt.Fprintf(stderr, "receipt %s\n", b)
	}
	if err != nil {
		return err
	}
	if res.Status < 200 || res.Status > 299 {
		return fmt.Errorf("pay: %s answered %d", r.URL, res.Status)
	}
	return nil
}
