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

// BeaconMetaData contains all meta data concerning the Beacon contract.
var BeaconMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"implementation_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"implementation\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "Beacon",
	Bin: "0x6080604052348015600e575f5ffd5b5060405160e638038060e6833981016040819052602991604c565b5f80546001600160a01b0319166001600160a01b03929092169190911790556077565b5f60208284031215605b575f5ffd5b81516001600160a01b03811681146070575f5ffd5b9392505050565b60648060825f395ff3fe6080604052348015600e575f5ffd5b50600436106026575f3560e01c80635c60da1b14602a575b5f5ffd5b5f54603b906001600160a01b031681565b6040516001600160a01b03909116815260200160405180910390f3fea164736f6c6343000825000a",
}

// Beacon is an auto generated Go binding around an Ethereum contract.
type Beacon struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *Beacon) GetABI() abi.ABI {
	return c.abi
}

// NewBeacon creates a new instance of Beacon.
func NewBeacon() *Beacon {
	parsed, err := BeaconMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &Beacon{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *Beacon) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address implementation_) returns()
func (beacon *Beacon) PackConstructor(implementation_ common.Address) []byte {
	enc, err := beacon.abi.Pack("", implementation_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackImplementation is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c60da1b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function implementation() view returns(address)
func (beacon *Beacon) PackImplementation() []byte {
	enc, err := beacon.abi.Pack("implementation")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackImplementation is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c60da1b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function implementation() view returns(address)
func (beacon *Beacon) TryPackImplementation() ([]byte, error) {
	return beacon.abi.Pack("implementation")
}

// UnpackImplementation is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5c60da1b.
//
// Solidity: function implementation() view returns(address)
func (beacon *Beacon) UnpackImplementation(data []byte) (common.Address, error) {
	out, err := beacon.abi.Unpack("implementation", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}
