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

// TestPublicResolverMetaData contains all meta data concerning the TestPublicResolver contract.
var TestPublicResolverMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"}],\"name\":\"addr\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"}],\"name\":\"name\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"a\",\"type\":\"address\"}],\"name\":\"setAddr\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"string\",\"name\":\"n\",\"type\":\"string\"}],\"name\":\"setName\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"string\",\"name\":\"key\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"value\",\"type\":\"string\"}],\"name\":\"setText\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes4\",\"name\":\"id\",\"type\":\"bytes4\"}],\"name\":\"supportsInterface\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"node\",\"type\":\"bytes32\"},{\"internalType\":\"string\",\"name\":\"key\",\"type\":\"string\"}],\"name\":\"text\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "TestPublicResolver",
	Bin: "0x6080604052348015600e575f5ffd5b506106db8061001c5f395ff3fe608060405234801561000f575f5ffd5b506004361061007a575f3560e01c806359d1d43c1161005857806359d1d43c146100fb578063691f34311461011b578063773722131461012e578063d5fa2b0014610141575f5ffd5b806301ffc9a71461007e57806310f13a8c146100a65780633b3b57de146100bb575b5f5ffd5b61009161008c3660046103ac565b61017c565b60405190151581526020015b60405180910390f35b6100b96100b436600461041f565b6101e8565b005b6100e36100c9366004610498565b5f908152602081905260409020546001600160a01b031690565b6040516001600160a01b03909116815260200161009d565b61010e6101093660046104af565b61022e565b60405161009d91906104f7565b61010e610129366004610498565b6102ef565b6100b961013c3660046104af565b61038e565b6100b961014f36600461052c565b5f9182526020829052604090912080546001600160a01b0319166001600160a01b03909216919091179055565b5f6301ffc9a760e01b6001600160e01b0319831614806101ac5750631d9dabef60e11b6001600160e01b03198316145b806101c7575063691f343160e01b6001600160e01b03198316145b806101e25750631674750f60e21b6001600160e01b03198316145b92915050565b818160025f8881526020019081526020015f20868660405161020b929190610565565b90815260200160405180910390209182610226929190610613565b505050505050565b606060025f8581526020019081526020015f208383604051610251929190610565565b9081526020016040518091039020805461026a90610588565b80601f016020809104026020016040519081016040528092919081815260200182805461029690610588565b80156102e15780601f106102b8576101008083540402835291602001916102e1565b820191905f5260205f20905b8154815290600101906020018083116102c457829003601f168201915b505050505090509392505050565b5f81815260016020526040902080546060919061030b90610588565b80601f016020809104026020016040519081016040528092919081815260200182805461033790610588565b80156103825780601f1061035957610100808354040283529160200191610382565b820191905f5260205f20905b81548152906001019060200180831161036557829003601f168201915b50505050509050919050565b5f8381526001602052604090206103a6828483610613565b50505050565b5f602082840312156103bc575f5ffd5b81356001600160e01b0319811681146103d3575f5ffd5b9392505050565b5f5f83601f8401126103ea575f5ffd5b50813567ffffffffffffffff811115610401575f5ffd5b602083019150836020828501011115610418575f5ffd5b9250929050565b5f5f5f5f5f60608688031215610433575f5ffd5b85359450602086013567ffffffffffffffff811115610450575f5ffd5b61045c888289016103da565b909550935050604086013567ffffffffffffffff81111561047b575f5ffd5b610487888289016103da565b969995985093965092949392505050565b5f602082840312156104a8575f5ffd5b5035919050565b5f5f5f604084860312156104c1575f5ffd5b83359250602084013567ffffffffffffffff8111156104de575f5ffd5b6104ea868287016103da565b9497909650939450505050565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b5f5f6040838503121561053d575f5ffd5b8235915060208301356001600160a01b038116811461055a575f5ffd5b809150509250929050565b818382375f9101908152919050565b634e487b7160e01b5f52604160045260245ffd5b600181811c9082168061059c57607f821691505b6020821081036105ba57634e487b7160e01b5f52602260045260245ffd5b50919050565b601f82111561060e578282111561060e57805f5260205f20601f840160051c60208510156105eb57505f5b90810190601f840160051c035f5b81811015610226575f838201556001016105f9565b505050565b67ffffffffffffffff83111561062b5761062b610574565b61063f836106398354610588565b836105c0565b5f601f841160018114610670575f85156106595750838201355b5f19600387901b1c1916600186901b1783556106c7565b5f83815260208120601f198716915b8281101561069f578685013582556020948501946001909201910161067f565b50868210156106bb575f1960f88860031b161c19848701351681555b505060018560011b0183555b505050505056fea164736f6c6343000825000a",
}

// TestPublicResolver is an auto generated Go binding around an Ethereum contract.
type TestPublicResolver struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *TestPublicResolver) GetABI() abi.ABI {
	return c.abi
}

// NewTestPublicResolver creates a new instance of TestPublicResolver.
func NewTestPublicResolver() *TestPublicResolver {
	parsed, err := TestPublicResolverMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &TestPublicResolver{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *TestPublicResolver) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackAddr is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3b3b57de.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function addr(bytes32 node) view returns(address)
func (testPublicResolver *TestPublicResolver) PackAddr(node [32]byte) []byte {
	enc, err := testPublicResolver.abi.Pack("addr", node)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAddr is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3b3b57de.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function addr(bytes32 node) view returns(address)
func (testPublicResolver *TestPublicResolver) TryPackAddr(node [32]byte) ([]byte, error) {
	return testPublicResolver.abi.Pack("addr", node)
}

// UnpackAddr is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3b3b57de.
//
// Solidity: function addr(bytes32 node) view returns(address)
func (testPublicResolver *TestPublicResolver) UnpackAddr(data []byte) (common.Address, error) {
	out, err := testPublicResolver.abi.Unpack("addr", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x691f3431.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function name(bytes32 node) view returns(string)
func (testPublicResolver *TestPublicResolver) PackName(node [32]byte) []byte {
	enc, err := testPublicResolver.abi.Pack("name", node)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x691f3431.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function name(bytes32 node) view returns(string)
func (testPublicResolver *TestPublicResolver) TryPackName(node [32]byte) ([]byte, error) {
	return testPublicResolver.abi.Pack("name", node)
}

// UnpackName is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x691f3431.
//
// Solidity: function name(bytes32 node) view returns(string)
func (testPublicResolver *TestPublicResolver) UnpackName(data []byte) (string, error) {
	out, err := testPublicResolver.abi.Unpack("name", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackSetAddr is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd5fa2b00.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setAddr(bytes32 node, address a) returns()
func (testPublicResolver *TestPublicResolver) PackSetAddr(node [32]byte, a common.Address) []byte {
	enc, err := testPublicResolver.abi.Pack("setAddr", node, a)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetAddr is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd5fa2b00.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setAddr(bytes32 node, address a) returns()
func (testPublicResolver *TestPublicResolver) TryPackSetAddr(node [32]byte, a common.Address) ([]byte, error) {
	return testPublicResolver.abi.Pack("setAddr", node, a)
}

// PackSetName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x77372213.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setName(bytes32 node, string n) returns()
func (testPublicResolver *TestPublicResolver) PackSetName(node [32]byte, n string) []byte {
	enc, err := testPublicResolver.abi.Pack("setName", node, n)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x77372213.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setName(bytes32 node, string n) returns()
func (testPublicResolver *TestPublicResolver) TryPackSetName(node [32]byte, n string) ([]byte, error) {
	return testPublicResolver.abi.Pack("setName", node, n)
}

// PackSetText is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x10f13a8c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setText(bytes32 node, string key, string value) returns()
func (testPublicResolver *TestPublicResolver) PackSetText(node [32]byte, key string, value string) []byte {
	enc, err := testPublicResolver.abi.Pack("setText", node, key, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetText is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x10f13a8c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setText(bytes32 node, string key, string value) returns()
func (testPublicResolver *TestPublicResolver) TryPackSetText(node [32]byte, key string, value string) ([]byte, error) {
	return testPublicResolver.abi.Pack("setText", node, key, value)
}

// PackSupportsInterface is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01ffc9a7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function supportsInterface(bytes4 id) pure returns(bool)
func (testPublicResolver *TestPublicResolver) PackSupportsInterface(id [4]byte) []byte {
	enc, err := testPublicResolver.abi.Pack("supportsInterface", id)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSupportsInterface is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01ffc9a7.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function supportsInterface(bytes4 id) pure returns(bool)
func (testPublicResolver *TestPublicResolver) TryPackSupportsInterface(id [4]byte) ([]byte, error) {
	return testPublicResolver.abi.Pack("supportsInterface", id)
}

// UnpackSupportsInterface is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x01ffc9a7.
//
// Solidity: function supportsInterface(bytes4 id) pure returns(bool)
func (testPublicResolver *TestPublicResolver) UnpackSupportsInterface(data []byte) (bool, error) {
	out, err := testPublicResolver.abi.Unpack("supportsInterface", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackText is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x59d1d43c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function text(bytes32 node, string key) view returns(string)
func (testPublicResolver *TestPublicResolver) PackText(node [32]byte, key string) []byte {
	enc, err := testPublicResolver.abi.Pack("text", node, key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackText is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x59d1d43c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function text(bytes32 node, string key) view returns(string)
func (testPublicResolver *TestPublicResolver) TryPackText(node [32]byte, key string) ([]byte, error) {
	return testPublicResolver.abi.Pack("text", node, key)
}

// UnpackText is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x59d1d43c.
//
// Solidity: function text(bytes32 node, string key) view returns(string)
func (testPublicResolver *TestPublicResolver) UnpackText(data []byte) (string, error) {
	out, err := testPublicResolver.abi.Unpack("text", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}
