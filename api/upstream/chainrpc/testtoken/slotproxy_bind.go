// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package testtoken

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// SlotProxyMetaData contains all meta data concerning the SlotProxy contract.
var SlotProxyMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"slot_\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"target\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"stateMutability\":\"payable\",\"type\":\"fallback\"}]",
	ID:  "SlotProxy",
	Bin: "0x60a0604052348015600e575f5ffd5b50604051610187380380610187833981016040819052602b916036565b60808290529055606e565b5f5f604083850312156046575f5ffd5b825160208401519092506001600160a01b03811681146063575f5ffd5b809150509250929050565b6080516101026100855f395f600601526101025ff3fe60806040527f000000000000000000000000000000000000000000000000000000000000000080547f5c0f528b1abdc514027f2c10bcb9a87cca5658d51511a600934ca7d4caecc2b0820160ad57806001600160a01b0316635c60da1b6040518163ffffffff1660e01b8152600401602060405180830381865afa1580156088573d5f5f3e3d5ffd5b505050506040513d601f19601f8201168201806040525081019060aa919060ca565b90505b365f5f375f5f365f845af43d5f5f3e80801560c6573d5ff35b3d5ffd5b5f6020828403121560d9575f5ffd5b81516001600160a01b038116811460ee575f5ffd5b939250505056fea164736f6c6343000825000a",
}

// SlotProxy is an auto generated Go binding around an Ethereum contract.
type SlotProxy struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *SlotProxy) GetABI() abi.ABI {
	return c.abi
}

// NewSlotProxy creates a new instance of SlotProxy.
func NewSlotProxy() *SlotProxy {
	parsed, err := SlotProxyMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &SlotProxy{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *SlotProxy) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(bytes32 slot_, address target) returns()
func (slotProxy *SlotProxy) PackConstructor(slot_ [32]byte, target common.Address) []byte {
	enc, err := slotProxy.abi.Pack("", slot_, target)
	if err != nil {
		panic(err)
	}
	return enc
}
