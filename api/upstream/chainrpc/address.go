package chainrpc

import (
	"errors"
	"regexp"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

var hexAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// CheckAddress accepts a 0x address written all-lowercase, all-uppercase, or in mixed case
// that matches its EIP-55 checksum. Mixed case that does not match is a typo caught by the
// checksum, so it is refused rather than silently normalised.
func CheckAddress(s string) error {
	if !hexAddress.MatchString(s) {
		return errors.New("must be a 0x-prefixed 20-byte hex address")
	}
	h := s[2:]
	if h == strings.ToLower(h) || h == strings.ToUpper(h) {
		return nil
	}
	if common.HexToAddress(s).Hex() != s {
		return errors.New("has a wrong EIP-55 checksum (write it all-lowercase to skip the check)")
	}
	return nil
}

// Checksummed returns the EIP-55 form of a valid address.
func Checksummed(s string) string { return common.HexToAddress(s).Hex() }
