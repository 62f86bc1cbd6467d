package catalog

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// vatFormats are the VAT number shapes VIES accepts per member state (the number after
// the 2-letter prefix). Greece is EL, and XI is Northern Ireland.
var vatFormats = map[string]*regexp.Regexp{
	"AT": regexp.MustCompile(`^U[0-9]{8}$`),
	"BE": regexp.MustCompile(`^[01][0-9]{9}$`),
	"BG": regexp.MustCompile(`^[0-9]{9,10}$`),
	"CY": regexp.MustCompile(`^[0-9]{8}[A-Z]$`),
	"CZ": regexp.MustCompile(`^[0-9]{8,10}$`),
	"DE": regexp.MustCompile(`^[0-9]{9}$`),
	"DK": regexp.MustCompile(`^[0-9]{8}$`),
	"EE": regexp.MustCompile(`^[0-9]{9}$`),
	"EL": regexp.MustCompile(`^[0-9]{9}$`),
	"ES": regexp.MustCompile(`^[0-9A-Z][0-9]{7}[0-9A-Z]$`),
	"FI": regexp.MustCompile(`^[0-9]{8}$`),
	"FR": regexp.MustCompile(`^[0-9A-HJ-NP-Z]{2}[0-9]{9}$`),
	"HR": regexp.MustCompile(`^[0-9]{11}$`),
	"HU": regexp.MustCompile(`^[0-9]{8}$`),
	"IE": regexp.MustCompile(`^([0-9]{7}[A-W][A-IW]?|[0-9][A-Z+*][0-9]{5}[A-W])$`),
	"IT": regexp.MustCompile(`^[0-9]{11}$`),
	"LT": regexp.MustCompile(`^([0-9]{9}|[0-9]{12})$`),
	"LU": regexp.MustCompile(`^[0-9]{8}$`),
	"LV": regexp.MustCompile(`^[0-9]{11}$`),
	"MT": regexp.MustCompile(`^[0-9]{8}$`),
	"NL": regexp.MustCompile(`^[0-9]{9}B[0-9]{2}$`),
	"PL": regexp.MustCompile(`^[0-9]{10}$`),
	"PT": regexp.MustCompile(`^[0-9]{9}$`),
	"RO": regexp.MustCompile(`^[1-9][0-9]{1,9}$`),
	"SE": regexp.MustCompile(`^[0-9]{10}01$`),
	"SI": regexp.MustCompile(`^[0-9]{8}$`),
	"SK": regexp.MustCompile(`^[0-9]{10}$`),
	"XI": regexp.MustCompile(`^([0-9]{9}|[0-9]{12}|GD[0-4][0-9]{2}|HA[5-9][0-9]{2})$`),
}

func checkVATEU(s string) error {
	s = strings.ToUpper(strings.NewReplacer(" ", "", ".", "", "-", "").Replace(s))
	if len(s) < 4 {
		return errors.New("must be an EU VAT number with its 2-letter country prefix (e.g. FR40303265045)")
	}
	cc, num := s[:2], s[2:]
	rx, ok := vatFormats[cc]
	switch {
	case cc == "GR":
		return errors.New("uses the prefix EL for Greece, not GR")
	case !ok:
		return errors.New("must start with the prefix of an EU member state (AT, BE, … SK) or XI")
	case !rx.MatchString(num):
		return errors.New("does not have the " + cc + " VAT number format")
	}
	return nil
}

// checkSchoolYear wants two consecutive years, "2025-2026".
func checkSchoolYear(s string) error {
	a, b, ok := strings.Cut(s, "-")
	y1, err1 := strconv.Atoi(a)
	y2, err2 := strconv.Atoi(b)
	if !ok || len(a) != 4 || len(b) != 4 || err1 != nil || err2 != nil || y2 != y1+1 || y1 < 2000 || y1 > 2100 {
		return errors.New("must be a school year of two consecutive years, like 2025-2026")
	}
	return nil
}

// checkDVFYear follows the DVF publication window: the last five full years and the
// current one (DGFiP republishes the files each April and October).
func checkDVFYear(s string) error {
	y, err := strconv.Atoi(s)
	now := time.Now().UTC().Year()
	if err != nil || len(s) != 4 {
		return errors.New("must be a year like " + strconv.Itoa(now-1))
	}
	if y < now-5 || y > now {
		return errors.New("must be between " + strconv.Itoa(now-5) + " and " + strconv.Itoa(now) + ", the years DVF publishes")
	}
	return nil
}

func init() {
	register("vat_eu", `^[A-Za-z]{2}[0-9A-Za-z+*]{2,12}$`, checkVATEU)
	register("annee_scolaire", `^[0-9]{4}-[0-9]{4}$`, checkSchoolYear)
	register("dvf_year", `^[0-9]{4}$`, checkDVFYear)
	// Unlike "departement", it refuses 20: Corsica has been 2A and 2B since 1976.
	register("departement_fr", `^(0[1-9]|1[0-9]|2[1-9AB]|[3-8][0-9]|9[0-5]|97[1-6])$`,
		re(`^(0[1-9]|1[0-9]|2[1-9AB]|[3-8][0-9]|9[0-5]|97[1-6])$`, "must be a French département code (01 to 95, 2A, 2B, 971 to 976)"))
	// A zone is a département, or a region written R and its code: bare, some codes are
	// both (84 is Vaucluse and Auvergne-Rhône-Alpes).
	register("zone_fr", `^(0[1-9]|1[0-9]|2[1-9AB]|[3-8][0-9]|9[0-5]|97[1-6]|R(0[1-46]|11|2[478]|32|44|5[23]|7[56]|84|9[34]))$`,
		re(`^(0[1-9]|1[0-9]|2[1-9AB]|[3-8][0-9]|9[0-5]|97[1-6]|R(0[1-46]|11|2[478]|32|44|5[23]|7[56]|84|9[34]))$`,
			"must be a département code (01 to 95, 2A, 2B, 971 to 976) or R and a region code (e.g. R84, R11)"))
}
