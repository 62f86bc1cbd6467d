package main

import (
	"context"
	"os"

	"github.com/peage/appliance/settle/pay"
)

func init() {
	register("pay", "pay for one call: --key FILE [GET|POST] URL [name=value ...]; body on stdout, receipt on stderr", runPay)
}

func runPay(ctx context.Context, args []string) error {
	return pay.Main(ctx, args, os.Stdout, os.Stderr)
}
