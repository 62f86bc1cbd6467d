package mailauth

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSPF(t *testing.T) {
	tests := []struct {
		name   string
		txts   []string
		check  func(SPF) bool
		errHas string
	}{
		{"none", []string{"google-site-verification=x"}, func(s SPF) bool { return !s.Present }, ""},
		{"provider", []string{"MS=1", "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 include:_spf.mailhost.test a mx -ptr ?exists:%{i}.spf.corp.test ~all"}, func(s SPF) bool {
			want := []SPFMechanism{{"pass", "ip4", "192.0.2.0/24"}, {"pass", "ip6", "2001:db8::/32"}, {"pass", "include", "_spf.mailhost.test"},
				{"pass", "a", ""}, {"pass", "mx", ""}, {"fail", "ptr", ""}, {"neutral", "exists", "%{i}.spf.corp.test"}, {"softfail", "all", ""}}
			return reflect.DeepEqual(s.Mechanisms, want) && s.All == "softfail" && s.Lookups == 5 && s.Error == ""
		}, ""},
		{"redirect only", []string{"v=spf1 redirect=_spf.google.com"}, func(s SPF) bool {
			return s.Redirect == "_spf.google.com" && s.All == "" && s.Lookups == 1
		}, ""},
		{"redirect ignored with all", []string{"v=spf1 mx redirect=_spf.x.test -all"}, func(s SPF) bool {
			return s.Redirect == "" && s.All == "fail" && s.Lookups == 1
		}, ""},
		{"mask on a", []string{"v=spf1 a/24 mx:mail.x.test/28 -all"}, func(s SPF) bool {
			return s.Mechanisms[0].Value == "/24" && s.Mechanisms[1].Value == "mail.x.test/28"
		}, ""},
		{"bare", []string{"v=spf1"}, func(s SPF) bool { return s.Present && len(s.Mechanisms) == 0 && s.Error == "" }, ""},
		{"not spf", []string{"v=spf10 -all"}, func(s SPF) bool { return !s.Present }, ""},
		{"two records", []string{"v=spf1 -all", "v=spf1 include:x.test ~all"}, func(s SPF) bool { return len(s.Records) == 2 }, "permerror: 2 SPF records"},
		{"unknown mechanism", []string{"v=spf1 ip:1.2.3.4 -all"}, func(s SPF) bool { return true }, "unknown mechanism"},
		{"too many lookups", []string{"v=spf1 " + strings.Repeat("include:x.test ", 11) + "-all"}, func(s SPF) bool { return s.Lookups == 11 }, "more than the 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ParseSPF(tt.txts)
			if !tt.check(s) || !strings.Contains(s.Error, tt.errHas) || (tt.errHas == "" && s.Error != "") {
				t.Fatalf("%+v", s)
			}
		})
	}
}

func TestParseDMARC(t *testing.T) {
	tests := []struct {
		name  string
		txts  []string
		check func(DMARC) bool
	}{
		{"absent", []string{"v=spf1 -all"}, func(d DMARC) bool { return !d.Present && d.Policy == "" }},
		{"full", []string{"v=DMARC1; p=reject; sp=quarantine; pct=50; rua=mailto:a@x.test,mailto:b@y.test; ruf=mailto:f@x.test; adkim=s; aspf=r; fo=1; ri=3600"},
			func(d DMARC) bool {
				return d.Policy == "reject" && d.SubdomainPolicy == "quarantine" && *d.Percent == 50 && len(d.RUA) == 2 &&
					d.RUF[0] == "mailto:f@x.test" && d.ADKIM == "s" && d.ASPF == "r" && d.FO == "1" && d.RI == 3600 && d.Error == ""
			}},
		{"defaults", []string{"v=DMARC1; p=reject;"}, func(d DMARC) bool {
			return d.Policy == "reject" && d.SubdomainPolicy == "reject" && *d.Percent == 100 && d.ADKIM == "r" && d.RI == 86400
		}},
		{"pct zero", []string{"v=DMARC1;p=quarantine;pct=0"}, func(d DMARC) bool { return *d.Percent == 0 }},
		{"bad p with rua", []string{"v=DMARC1; p=bogus; rua=mailto:d@x.test", "other=1"}, func(d DMARC) bool {
			return d.Policy == "none" && strings.Contains(d.Error, "p tag")
		}},
		{"bad p without rua", []string{"v=DMARC1; p=bogus"}, func(d DMARC) bool { return d.Policy == "" && d.Error != "" }},
		{"two records", []string{"v=DMARC1; p=none", "v=DMARC1; p=reject"}, func(d DMARC) bool {
			return d.Policy == "" && strings.Contains(d.Error, "2 DMARC records")
		}},
		{"not first tag", []string{"p=reject; v=DMARC1"}, func(d DMARC) bool { return !d.Present }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := ParseDMARC("_dmarc.x.test", tt.txts); !tt.check(d) {
				t.Fatalf("%+v", d)
			}
		})
	}
}
