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

// TestENSRegistryMetaData contains all meta data concerning the TestENSRegistry contract.
var TestENSRegistryMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"}],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"}],\"name\":\"resolver\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"resolver_\",\"type\":\"address\"}],\"name\":\"setResolver\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"label\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"owner_\",\"type\":\"address\"}],\"name\":\"setSubnodeOwner\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "TestENSRegistry",
	Bin: "0x6080604052348015600e575f5ffd5b505f8080526020527fad3228b676f7d3cd4284a5443f17f1962b36e491b30a40b2405849e597ba5fb580546001600160a01b031916331790556102e9806100545f395ff3fe608060405234801561000f575f5ffd5b506004361061004a575f3560e01c80630178b8bf1461004e57806302571be31461009657806306ab5923146100be5780631896f70a146100df575b5f5ffd5b61007961005c36600461024e565b5f908152602081905260409020600101546001600160a01b031690565b6040516001600160a01b0390911681526020015b60405180910390f35b6100796100a436600461024e565b5f908152602081905260409020546001600160a01b031690565b6100d16100cc366004610280565b6100f4565b60405190815260200161008d565b6100f26100ed3660046102b2565b6101ba565b005b5f8381526020819052604081205484906001600160a01b0316331461015c5760405162461bcd60e51b815260206004820152601960248201527822a7299d103737ba103a3432903737b23293b99037bbb732b960391b60448201526064015b60405180910390fd5b60408051602081018790529081018590525f9060600160408051601f1981840301815291815281516020928301205f81815292839052912080546001600160a01b0387166001600160a01b0319909116179055925050509392505050565b5f8281526020819052604090205482906001600160a01b0316331461021d5760405162461bcd60e51b815260206004820152601960248201527822a7299d103737ba103a3432903737b23293b99037bbb732b960391b6044820152606401610153565b505f9182526020829052604090912060010180546001600160a01b0319166001600160a01b03909216919091179055565b5f6020828403121561025e575f5ffd5b5035919050565b80356001600160a01b038116811461027b575f5ffd5b919050565b5f5f5f60608486031215610292575f5ffd5b83359250602084013591506102a960408501610265565b90509250925092565b5f5f604083850312156102c3575f5ffd5b823591506102d360208401610265565b9050925092905056fea164736f6c6343000825000a",
}

// TestENSRegistry is an auto generated Go binding around an Ethereum contract.
type TestENSRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *TestENSRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewTestENSRegistry creates a new instance of TestENSRegistry.
func NewTestENSRegistry() *TestENSRegistry {
	parsed, err := TestENSRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &TestENSRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *TestENSRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x02571be3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) PackOwner(node [32]byte) []byte {
	enc, err := testENSRegistry.abi.Pack("owner", node)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x02571be3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) TryPackOwner(node [32]byte) ([]byte, error) {
	return testENSRegistry.abi.Pack("owner", node)
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x02571be3.
//
// Solidity: function owner(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) UnpackOwner(data []byte) (common.Address, error) {
	out, err := testENSRegistry.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackResolver is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0178b8bf.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function resolver(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) PackResolver(node [32]byte) []byte {
	enc, err := testENSRegistry.abi.Pack("resolver", node)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackResolver is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0178b8bf.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function resolver(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) TryPackResolver(node [32]byte) ([]byte, error) {
	return testENSRegistry.abi.Pack("resolver", node)
}

// UnpackResolver is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x0178b8bf.
//
// Solidity: function resolver(bytes32 node) view returns(address)
func (testENSRegistry *TestENSRegistry) UnpackResolver(data []byte) (common.Address, error) {
	out, err := testENSRegistry.abi.Unpack("resolver", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackSetResolver is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1896f70a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setResolver(bytes32 node, address resolver_) returns()
func (testENSRegistry *TestENSRegistry) PackSetResolver(node [32]byte, resolver common.Address) []byte {
	enc, err := testENSRegistry.abi.Pack("setResolver", node, resolver)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetResolver is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1896f70a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setResolver(bytes32 node, address resolver_) returns()
func (testENSRegistry *TestENSRegistry) TryPackSetResolver(node [32]byte, resolver common.Address) ([]byte, error) {
	return testENSRegistry.abi.Pack("setResolver", node, resolver)
}

// PackSetSubnodeOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06ab5923.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setSubnodeOwner(bytes32 node, bytes32 label, address owner_) returns(bytes32)
func (testENSRegistry *TestENSRegistry) PackSetSubnodeOwner(node [32]byte, label [32]byte, owner common.Address) []byte {
	enc, err := testENSRegistry.abi.Pack("setSubnodeOwner", node, label, owner)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetSubnodeOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06ab5923.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setSubnodeOwner(bytes32 node, bytes32 label, address owner_) returns(bytes32)
func (testENSRegistry *TestENSRegistry) TryPackSetSubnodeOwner(node [32]byte, label [32]byte, owner common.Address) ([]byte, error) {
	return testENSRegistry.abi.Pack("setSubnodeOwner", node, label, owner)
}

// UnpackSetSubnodeOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x06ab5923.
//
// Solidity: function setSubnodeOwner(bytes32 node, bytes32 label, address owner_) returns(bytes32)
func (testENSRegistry *TestENSRegistry) UnpackSetSubnodeOwner(data []byte) ([32]byte, error) {
	out, err := testENSRegistry.abi.Unpack("setSubnodeOwner", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}
