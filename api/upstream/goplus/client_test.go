package goplus

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestTokenSecurityRecordings(t *testing.T) {
	const kokodi = "0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c"
	const rug = "0xe8852d270294cc9a84fe73d5a434ae85a1c34444"
	// The four.meme token's recording is the result record alone; GoPlus answers it inside
	// its envelope, keyed by the lowercased address (DERIVED, see testdata/PROVENANCE).
	inner, err := os.ReadFile("testdata/token_security_result_0xe8852d.json")
	if err != nil {
		t.Fatal(err)
	}
	s := upstreamtest.New(t)
	s.Expect("/api/v1/token_security/1", upstreamtest.Query("contract_addresses", kokodi), upstreamtest.File(t, "testdata/token_security_1_kokodi.json"))
	s.Expect("/api/v1/token_security/56", upstreamtest.Query("contract_addresses", rug),
		upstreamtest.JSON(200, `{"code":1,"message":"OK","result":{"`+rug+`":`+string(inner)+`}}`))
	s.Expect("/api/v1/token_security/8453", upstreamtest.Query("contract_addresses", rug), upstreamtest.JSON(200, `{"code":1,"message":"OK","result":{}}`))
	c := New(s.Client(t, Name))
	ctx := context.Background()

	k, err := c.TokenSecurity(ctx, "1", "0x4E7E15A6B83718BA79674CC4CE09F7D4A631EC2C")
	if err != nil {
		t.Fatal(err)
	}
	if k.TokenSymbol != "KOKO" || k.IsHoneypot != "1" || len(k.Holders) == 0 || len(k.Dex) == 0 {
		t.Errorf("kokodi = %+v", k)
	}

	r, err := c.TokenSecurity(ctx, "56", rug)
	if err != nil {
		t.Fatal(err)
	}
	if r.TokenName != "Russell rug Survivor" || r.TokenSymbol != "RUGSURVIVE" || r.TotalSupply != "1000000000" || r.IsOpenSource != "1" ||
		r.OwnerAddress != "0x0000000000000000000000000000000000000000" || r.HolderCount != "5" || len(r.Dex) != 0 || r.LPHolders != nil {
		t.Errorf("four.meme token = %+v", r)
	}
	if len(r.Holders) != 5 || r.Holders[0].IsContract.V != 1 || r.Holders[0].Percent.V != 0.999999999999997456 || r.Holders[4].Percent.V != 0.00000000000000034 {
		t.Errorf("holders = %+v", r.Holders)
	}

	if _, err := c.TokenSecurity(ctx, "8453", rug); !errors.Is(err, ErrNoData) {
		t.Errorf("empty result: %v, want ErrNoData", err)
	}
}
