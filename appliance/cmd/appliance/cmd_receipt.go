package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/durable"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

func init() {
	register("receipt", "verify a kept paid answer's signed receipt and delivery statement (verify), or rotate the box's receipt keys (rotate)", runReceipt)
}

func runReceipt(ctx context.Context, args []string) error { return receiptTo(ctx, os.Stdout, args) }

func receiptTo(ctx context.Context, out io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: appliance receipt verify|rotate [flags]")
	}
	switch args[0] {
	case "verify":
		return receiptVerify(ctx, out, args[1:])
	case "rotate":
		return receiptRotate(out, args[1:])
	}
	return fmt.Errorf("appliance receipt: unknown sub-command %q (verify, rotate)", args[0])
}

// ErrReceiptInvalid is the exit of a verification that found faults (they are printed).
var ErrReceiptInvalid = errors.New("receipt not valid")

// receiptVerify checks a kept answer offline (with --keys FILE) or against the keys the box
// publishes (fetched from the receipt's resource host).
func receiptVerify(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("receipt verify", flag.ContinueOnError)
	response := fs.String("response", "", "`FILE` holding the saved answer, headers and body (curl -i -o FILE, or curl -D - )")
	header := fs.String("payment-response", "", "the PAYMENT-RESPONSE header's `VALUE` (with --body, instead of --response)")
	bodyFile := fs.String("body", "", "`FILE` holding the body delivered (with --payment-response)")
	contentType := fs.String("content-type", "", "the Content-Type delivered (checked when given)")
	keys := fs.String("keys", "", "the box's published keys: a `FILE` or URL [the resource host's /.well-known/x402-receipt-keys.json]")
	resource := fs.String("url", "", "the `URL` you called; the receipt must be for it (its query is ignored)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ev := receipt.Evidence{PaymentResponse: *header, ContentType: *contentType}
	switch {
	case *response != "" && *header == "":
		raw, err := os.ReadFile(*response)
		if err != nil {
			return err
		}
		h, body, err := splitSavedResponse(raw)
		if err != nil {
			return fmt.Errorf("--response %s: %w", *response, err)
		}
		ev.Body = body
		if ev.PaymentResponse = h.Get(x402.HeaderPaymentResponse); ev.PaymentResponse == "" {
			ev.PaymentResponse = h.Get(x402.HeaderXPaymentResponse)
		}
		if ev.ContentType == "" {
			ev.ContentType = h.Get("Content-Type")
		}
	case *header != "" && *bodyFile != "":
		b, err := os.ReadFile(*bodyFile)
		if err != nil {
			return err
		}
		ev.Body = b
	default:
		return errors.New("give --response FILE, or --payment-response VALUE and --body FILE")
	}
	if *resource != "" {
		u, err := url.Parse(*resource)
		if err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		u.RawQuery, u.Fragment = "", ""
		ev.ResourceURL = u.String()
	}
	pub, err := publishedKeys(ctx, *keys, ev.PaymentResponse)
	if err != nil {
		return err
	}
	v, err := pub.Verify(ev, time.Now())
	var f *receipt.Failure
	if errors.As(err, &f) {
		fmt.Fprintln(out, "NOT VALID:")
		for _, p := range f.Problems {
			fmt.Fprintln(out, "  -", p)
		}
		return ErrReceiptInvalid
	}
	if err != nil {
		return err
	}
	s := v.Statement
	fmt.Fprintf(out, "VALID: %s receipt signed by %s\n", v.Format, v.Signer)
	fmt.Fprintf(out, "  resource    %s (%s %s)\n  payer       %s\n  paid        %s atomic units, %s on %s\n", v.Receipt.ResourceURL, s.Request.Method, s.Request.Path, v.Receipt.Payer, s.Amount, s.Scheme, s.Network)
	fmt.Fprintf(out, "  settlement  %s %s\n  body        %d bytes of %s, SHA-256 %s\n", s.Settlement, s.Transaction, s.Response.Length, s.Response.ContentType, s.Response.SHA256)
	if s.Subject != nil {
		fmt.Fprintf(out, "  subject     %s %s%s %s\n", s.Subject.Kind, s.Subject.ID, s.Subject.KeySHA256, s.Subject.Terms)
	}
	return nil
}

// splitSavedResponse reads an answer saved with its headers (curl -i): the last header block
// (after any 100 Continue) and the body after it, byte for byte.
func splitSavedResponse(raw []byte) (http.Header, []byte, error) {
	for {
		i, sep := bytes.Index(raw, []byte("\r\n\r\n")), 4
		if j := bytes.Index(raw, []byte("\n\n")); j >= 0 && (i < 0 || j < i) {
			i, sep = j, 2
		}
		if i < 0 {
			return nil, nil, errors.New("no blank line between headers and body")
		}
		head, rest := raw[:i], raw[i+sep:]
		tp := textproto.NewReader(bufio.NewReader(io.MultiReader(bytes.NewReader(head), strings.NewReader("\r\n\r\n"))))
		status, err := tp.ReadLine()
		if err != nil || !strings.HasPrefix(status, "HTTP/") {
			return nil, nil, errors.New("does not start with an HTTP status line (save it with curl -i)")
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
		if f := strings.Fields(status); len(f) > 1 && strings.HasPrefix(f[1], "1") {
			raw = rest
			continue
		}
		return http.Header(h), rest, nil
	}
}

// publishedKeys reads the keys document from a file or URL, or from the receipt's host.
func publishedKeys(ctx context.Context, from, paymentResponse string) (*receipt.Published, error) {
	if from == "" {
		r, _, err := receipt.ExtractReceipt(paymentResponse)
		if err != nil {
			return nil, err
		}
		res := receiptResource(r)
		u, err := url.Parse(res)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("the receipt names no resource host (%q); give --keys", res)
		}
		from = u.Scheme + "://" + u.Host + "/.well-known/x402-receipt-keys.json"
	}
	var b []byte
	var err error
	if strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://") {
		b, err = fetchKeys(ctx, from)
	} else {
		b, err = os.ReadFile(from)
	}
	if err != nil {
		return nil, fmt.Errorf("receipt keys %s: %w", from, err)
	}
	return receipt.ParsePublished(b)
}

func receiptResource(r receipt.SignedReceipt) string {
	if r.Payload != nil {
		return r.Payload.ResourceURL
	}
	var p receipt.ReceiptPayload
	if parts := strings.Split(r.Signature, "."); len(parts) == 3 {
		_ = receipt.DecodeJWSPayload(parts[1], &p)
	}
	return p.ResourceURL
}

func fetchKeys(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// receiptRotate replaces the current receipt key; the old one keeps verifying for the
// overlap. The API reads the keys at start: restart it afterwards.
func receiptRotate(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("receipt rotate", flag.ContinueOnError)
	dir := fs.String("credentials", credential.Dir, "directory of the box's secrets")
	overlap := fs.Duration("overlap", 30*24*time.Hour, "how long the old key keeps verifying receipts signed before the rotation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := filepath.Join(*dir, receipt.CredentialName)
	old, err := credential.Read(p)
	if err != nil {
		return err
	}
	text, err := receipt.Rotate(old, *overlap, time.Now())
	if err != nil {
		return err
	}
	if err := durable.WriteFile(p, []byte(text+"\n"), 0o600, "."+receipt.CredentialName+".*"); err != nil {
		return err
	}
	fmt.Fprintf(out, "receipt keys rotated in %s; the old key verifies until %s; restart the API: systemctl restart peage-api\n",
		p, time.Now().Add(*overlap).UTC().Format(time.RFC3339))
	return nil
}
