// Package nftables holds the box's firewall ruleset (peage.nft, installed as
// /etc/nftables.conf) and its test, which loads it into throwaway network namespaces and
// checks what each user can reach. There is no Go code to import here.
package nftables
