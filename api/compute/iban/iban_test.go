package iban

import (
	"strings"
	"testing"
)

// Valid examples: the SWIFT IBAN registry's example IBAN of each country.
var valid = []string{
	"GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606",
	"NL91ABNA0417164300", "BE68539007547034", "ES9121000418450200051332",
	"IT60X0542811101000000123456", "CH9300762011623852957", "AT611904300234573201",
	"NO9386011117947", "MT84MALT011000012345MTLCAST001S", "SA0380000000608010167519",
	"PL61109010140000071219812874", "SE4550000000058398257466", "LU280019400644750000",
	"IE29AIBK93115212345678", "PT50000201231234567890154", "DK5000400440116243",
	"FI2112345600000785", "HU42117730161111101800000000", "CZ6508000000192000145399",
	"GR1601101250000000012300695", "RO49AAAA1B31007593840000", "BG80BNBG96611020345678",
	"HR1210010051863000160", "LT121000011101001000", "LV80BANK0000435195001",
	"EE382200221020145685", "SK3112000000198742637541", "SI56263300012039086",
	"IS140159260076545510730339", "TR330006100519786457841326", "BR1800360305000010009795493C1",
	"AD1200012030200359100100", "AL47212110090000000235698741", "AZ21NABZ00000000137010001944",
	"BH67BMAG00001299123456", "BA391290079401028494", "CY17002001280000001200527600",
	"GI75NWBK000000007099453", "LI21088100002324013AA", "SM86U0322509800000000270100",
	"fr14 2004 1010 0505 0001 3m02 606", // spaces and lower case are normalised
}

func TestValid(t *testing.T) {
	for _, s := range valid {
		r := Check(s)
		if !r.Valid {
			t.Errorf("Check(%s) invalid: %s", s, r.Error)
		}
		if len(r.IBAN) != Length(r.Country) {
			t.Errorf("Check(%s): length %d, registry %d", s, len(r.IBAN), Length(r.Country))
		}
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct{ in, why string }{
		{"GB82WEST12345698765433", "mod-97"},
		{"DE89370400440532013001", "mod-97"},
		{"DE8937040044053201300", "length 21"},
		{"NL91ABNA04171643000", "length 19"},
		{"XX82WEST12345698765432", "no IBAN format"},
		{"1B82WEST12345698765432", "country code"},
		{"GBA2WEST12345698765432", "check digits"},
		{"GB82WEST1234569876543-", "letters and digits"},
		{"FR", "too short"},
		{"US64SVBKUS6S3300958879", "no IBAN format"},
		// mod-97 right but RIB key wrong: the account's last digit changed and the IBAN
		// check digits recomputed (FR79…), so only the national check can catch it.
		{ribBroken(), "RIB key"},
	}
	for _, tt := range tests {
		r := Check(tt.in)
		if r.Valid || !strings.Contains(r.Error, tt.why) {
			t.Errorf("Check(%s) = valid %v, %q; want invalid for %q", tt.in, r.Valid, r.Error, tt.why)
		}
	}
}

// ribBroken builds an FR IBAN whose mod-97 is right and whose RIB key is wrong.
func ribBroken() string {
	bban := "20041010050500013M02607" // RIB key 07 instead of 06
	for cd := 2; cd <= 98; cd++ {
		s := "FR" + string([]byte{byte('0' + cd/10), byte('0' + cd%10)}) + bban
		if mod97(s[4:]+s[:4]) == 1 {
			return s
		}
	}
	panic("no check digits")
}

func TestFrenchRIB(t *testing.T) {
	r := Check("FR14 2004 1010 0505 0001 3M02 606")
	if r.BankCode != "20041" || r.BranchCode != "01005" || r.Account != "0500013M026" || r.RIBKey != "06" {
		t.Fatalf("RIB split = %+v", r)
	}
	if r.RIBKeyValid == nil || !*r.RIBKeyValid {
		t.Error("RIB key 06 must check out")
	}
	if r.BankName == nil || *r.BankName != "LA BANQUE POSTALE" {
		t.Errorf("bank = %v", r.BankName)
	}
	if r := Check("FR7630006000011234567890189"); !r.Valid || r.BankName != nil {
		t.Errorf("a code outside the table must answer banque null: %+v", r)
	}
}

func TestRIBLetters(t *testing.T) {
	want := map[byte]int{'A': 1, 'I': 9, 'J': 1, 'R': 9, 'S': 2, 'Z': 9, 'M': 4}
	for c, d := range want {
		if got := ribLetter(c); got != d {
			t.Errorf("ribLetter(%c) = %d, want %d", c, got, d)
		}
	}
}

func TestBankTableParses(t *testing.T) {
	if len(frBanks) < 10 || frBanks["30004"] != "BNP PARIBAS" {
		t.Errorf("bank table: %d rows", len(frBanks))
	}
}
