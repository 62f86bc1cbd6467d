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

// TestOffchainResolverMetaData contains all meta data concerning the TestOffchainResolver contract.
var TestOffchainResolverMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"string\",\"name\":\"url_\",\"type\":\"string\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"internalType\":\"string[]\",\"name\":\"urls\",\"type\":\"string[]\"},{\"internalType\":\"bytes\",\"name\":\"callData\",\"type\":\"bytes\"},{\"internalType\":\"bytes4\",\"name\":\"callbackFunction\",\"type\":\"bytes4\"},{\"internalType\":\"bytes\",\"name\":\"extraData\",\"type\":\"bytes\"}],\"name\":\"OffchainLookup\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes\",\"name\":\"name\",\"type\":\"bytes\"},{\"internalType\":\"bytes\",\"name\":\"data\",\"type\":\"bytes\"}],\"name\":\"resolve\",\"outputs\":[{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes\",\"name\":\"response\",\"type\":\"bytes\"},{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"name\":\"resolveWithProof\",\"outputs\":[{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes4\",\"name\":\"id\",\"type\":\"bytes4\"}],\"name\":\"supportsInterface\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"pure\",\"type\":\"function\"}]",
	ID:  "TestOffchainResolver",
	Bin: "0x608060405234801561000f575f5ffd5b506040516108b13803806108b183398101604081905261002e91610054565b5f6100398282610193565b5050610251565b634e487b7160e01b5f52604160045260245ffd5b5f60208284031215610064575f5ffd5b81516001600160401b03811115610079575f5ffd5b8201601f81018413610089575f5ffd5b80516001600160401b038111156100a2576100a2610040565b604051601f8201601f19908116603f011681016001600160401b03811182821017156100d0576100d0610040565b6040528181528282016020018610156100e7575f5ffd5b8160208401602083015e5f91810160200191909152949350505050565b600181811c9082168061011857607f821691505b60208210810361013657634e487b7160e01b5f52602260045260245ffd5b50919050565b601f82111561018e578282111561018e57805f5260205f20601f840160051c602085101561016757505f5b90810190601f840160051c035f5b8181101561018a575f83820155600101610175565b5050505b505050565b81516001600160401b038111156101ac576101ac610040565b6101c0816101ba8454610104565b8461013c565b6020601f8211600181146101f2575f83156101db5750848201515b5f19600385901b1c1916600184901b17845561024a565b5f84815260208120601f198516915b828110156102215787850151825560209485019460019092019101610201565b508482101561023e57868401515f19600387901b60f8161c191681555b505060018360011b0184555b5050505050565b6106538061025e5f395ff3fe608060405234801561000f575f5ffd5b506004361061003f575f3560e01c806301ffc9a7146100435780639061b9231461006b578063f4d4d2f81461008b575b5f5ffd5b6100566100513660046102b6565b61009e565b60405190151581526020015b60405180910390f35b61007e610079366004610329565b6100d4565b60405161006291906103c3565b61007e610099366004610329565b610231565b5f6301ffc9a760e01b6001600160e01b0319831614806100ce5750639061b92360e01b6001600160e01b03198316145b92915050565b6040805160018082528183019092526060915f9190816020015b60608152602001906001900390816100ee5790505090505f8054610111906103e9565b80601f016020809104026020016040519081016040528092919081815260200182805461013d906103e9565b80156101885780601f1061015f57610100808354040283529160200191610188565b820191905f5260205f20905b81548152906001019060200180831161016b57829003601f168201915b5050505050815f8151811061019f5761019f610421565b60200260200101819052505f639061b92360e01b878787876040516024016101ca949392919061045d565b60408051601f198184030181529181526020820180516001600160e01b03166001600160e01b0319909416939093179092529051630556f18360e41b815290915061022890309084908490631e9a9a5f60e31b90829060040161048e565b60405180910390fd5b60605f80610241868801886105c4565b5091509150428167ffffffffffffffff1610156102ac5760405162461bcd60e51b815260206004820152602360248201527f4f6666636861696e5265736f6c7665723a207369676e617475726520657870696044820152621c995960ea1b6064820152608401610228565b5095945050505050565b5f602082840312156102c6575f5ffd5b81356001600160e01b0319811681146102dd575f5ffd5b9392505050565b5f5f83601f8401126102f4575f5ffd5b50813567ffffffffffffffff81111561030b575f5ffd5b602083019150836020828501011115610322575f5ffd5b9250929050565b5f5f5f5f6040858703121561033c575f5ffd5b843567ffffffffffffffff811115610352575f5ffd5b61035e878288016102e4565b909550935050602085013567ffffffffffffffff81111561037d575f5ffd5b610389878288016102e4565b95989497509550505050565b5f81518084528060208401602086015e5f602082860101526020601f19601f83011685010191505092915050565b602081525f6102dd6020830184610395565b634e487b7160e01b5f52604160045260245ffd5b600181811c908216806103fd57607f821691505b60208210810361041b57634e487b7160e01b5f52602260045260245ffd5b50919050565b634e487b7160e01b5f52603260045260245ffd5b81835281816020850137505f828201602090810191909152601f909101601f19169091010190565b604081525f610470604083018688610435565b8281036020840152610483818587610435565b979650505050505050565b5f60a0820160018060a01b038816835260a0602084015280875180835260c08501915060c08160051b8601019250602089015f5b828110156104f35760bf198786030184526104de858351610395565b945060209384019391909101906001016104c2565b5050505082810360408401526105098187610395565b6001600160e01b0319861660608501529050828103608084015261052d8185610395565b98975050505050505050565b5f82601f830112610548575f5ffd5b813567ffffffffffffffff811115610562576105626103d5565b604051601f8201601f19908116603f0116810167ffffffffffffffff81118282101715610591576105916103d5565b6040528181528382016020018510156105a8575f5ffd5b816020850160208301375f918101602001919091529392505050565b5f5f5f606084860312156105d6575f5ffd5b833567ffffffffffffffff8111156105ec575f5ffd5b6105f886828701610539565b935050602084013567ffffffffffffffff81168114610615575f5ffd5b9150604084013567ffffffffffffffff811115610630575f5ffd5b61063c86828701610539565b915050925092509256fea164736f6c6343000825000a",
}

// TestOffchainResolver is an auto generated Go binding around an Ethereum contract.
type TestOffchainResolver struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *TestOffchainResolver) GetABI() abi.ABI {
	return c.abi
}

// NewTestOffchainResolver creates a new instance of TestOffchainResolver.
func NewTestOffchainResolver() *TestOffchainResolver {
	parsed, err := TestOffchainResolverMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &TestOffchainResolver{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *TestOffchainResolver) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(string url_) returns()
func (testOffchainResolver *TestOffchainResolver) PackConstructor(url_ string) []byte {
	enc, err := testOffchainResolver.abi.Pack("", url_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackResolve is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9061b923.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function resolve(bytes name, bytes data) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) PackResolve(name []byte, data []byte) []byte {
	enc, err := testOffchainResolver.abi.Pack("resolve", name, data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackResolve is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9061b923.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function resolve(bytes name, bytes data) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) TryPackResolve(name []byte, data []byte) ([]byte, error) {
	return testOffchainResolver.abi.Pack("resolve", name, data)
}

// UnpackResolve is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x9061b923.
//
// Solidity: function resolve(bytes name, bytes data) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) UnpackResolve(data []byte) ([]byte, error) {
	out, err := testOffchainResolver.abi.Unpack("resolve", data)
	if err != nil {
		return *new([]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([]byte)).(*[]byte)
	return out0, nil
}

// PackResolveWithProof is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf4d4d2f8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function resolveWithProof(bytes response, bytes ) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) PackResolveWithProof(response []byte, arg1 []byte) []byte {
	enc, err := testOffchainResolver.abi.Pack("resolveWithProof", response, arg1)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackResolveWithProof is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf4d4d2f8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function resolveWithProof(bytes response, bytes ) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) TryPackResolveWithProof(response []byte, arg1 []byte) ([]byte, error) {
	return testOffchainResolver.abi.Pack("resolveWithProof", response, arg1)
}

// UnpackResolveWithProof is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf4d4d2f8.
//
// Solidity: function resolveWithProof(bytes response, bytes ) view returns(bytes)
func (testOffchainResolver *TestOffchainResolver) UnpackResolveWithProof(data []byte) ([]byte, error) {
	out, err := testOffchainResolver.abi.Unpack("resolveWithProof", data)
	if err != nil {
		return *new([]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([]byte)).(*[]byte)
	return out0, nil
}

// PackSupportsInterface is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x01ffc9a7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function supportsInterface(bytes4 id) pure returns(bool)
func (testOffchainResolver *TestOffchainResolver) PackSupportsInterface(id [4]byte) []byte {
	enc, err := testOffchainResolver.abi.Pack("supportsInterface", id)
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
func (testOffchainResolver *TestOffchainResolver) TryPackSupportsInterface(id [4]byte) ([]byte, error) {
	return testOffchainResolver.abi.Pack("supportsInterface", id)
}

// UnpackSupportsInterface is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x01ffc9a7.
//
// Solidity: function supportsInterface(bytes4 id) pure returns(bool)
func (testOffchainResolver *TestOffchainResolver) UnpackSupportsInterface(data []byte) (bool, error) {
	out, err := testOffchainResolver.abi.Unpack("supportsInterface", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (testOffchainResolver *TestOffchainResolver) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], testOffchainResolver.abi.Errors["OffchainLookup"].ID.Bytes()[:4]) {
		return testOffchainResolver.UnpackOffchainLookupError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// TestOffchainResolverOffchainLookup represents a OffchainLookup error raised by the TestOffchainResolver contract.
type TestOffchainResolverOffchainLookup struct {
	Sender           common.Address
	Urls             []string
	CallData         []byte
	CallbackFunction [4]byte
	ExtraData        []byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData)
func TestOffchainResolverOffchainLookupErrorID() common.Hash {
	return common.HexToHash("0x556f18302ad20acabcb7abd78e46143543eff9de9c87236fb097a1398d41115e")
}

// UnpackOffchainLookupError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData)
func (testOffchainResolver *TestOffchainResolver) UnpackOffchainLookupError(raw []byte) (*TestOffchainResolverOffchainLookup, error) {
	out := new(TestOffchainResolverOffchainLookup)
	if err := testOffchainResolver.abi.UnpackIntoInterface(out, "OffchainLookup", raw); err != nil {
		return nil, err
	}
	return out, nil
}
