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

// Bytes32TokenMetaData contains all meta data concerning the Bytes32Token contract.
var Bytes32TokenMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"name_\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"symbol_\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"decimals_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"supply\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Approval\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Transfer\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"name\":\"allowance\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"approve\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"decimals\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"name\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"symbol\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalSupply\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transfer\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transferFrom\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "Bytes32Token",
	Bin: "0x608060405234801561000f575f5ffd5b5060405161060338038061060383398101604081905261002e916100d5565b6003849055600483905560058290556100473382610050565b5050505061012d565b805f5f8282546100609190610108565b90915550506001600160a01b0382165f908152600160205260408120805483929061008c908490610108565b90915550506040518181526001600160a01b038316905f907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a35050565b5f5f5f5f608085870312156100e8575f5ffd5b505082516020840151604085015160609095015191969095509092509050565b8082018082111561012757634e487b7160e01b5f52601160045260245ffd5b92915050565b6104c98061013a5f395ff3fe608060405234801561000f575f5ffd5b5060043610610090575f3560e01c8063313ce56711610063578063313ce567146100ee57806370a08231146100f757806395d89b4114610116578063a9059cbb1461011f578063dd62ed3e14610132575f5ffd5b806306fdde0314610094578063095ea7b3146100b057806318160ddd146100d357806323b872dd146100db575b5f5ffd5b61009d60035481565b6040519081526020015b60405180910390f35b6100c36100be3660046103cf565b61015c565b60405190151581526020016100a7565b61009d5f5481565b6100c36100e93660046103f7565b6101c8565b61009d60055481565b61009d610105366004610431565b60016020525f908152604090205481565b61009d60045481565b6100c361012d3660046103cf565b61028c565b61009d610140366004610451565b600260209081525f928352604080842090915290825290205481565b335f8181526002602090815260408083206001600160a01b038716808552925280832085905551919290917f8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925906101b69086815260200190565b60405180910390a35060015b92915050565b6001600160a01b0383165f908152600260209081526040808320338452909152812054828110156102405760405162461bcd60e51b815260206004820152601960248201527f45524332303a20616c6c6f77616e63652065786365656465640000000000000060448201526064015b60405180910390fd5b5f198114610276576102528382610496565b6001600160a01b0386165f9081526002602090815260408083203384529091529020555b6102818585856102a1565b506001949350505050565b5f6102983384846102a1565b50600192915050565b6001600160a01b0383165f908152600160205260409020548111156103085760405162461bcd60e51b815260206004820152601760248201527f45524332303a2062616c616e63652065786365656465640000000000000000006044820152606401610237565b6001600160a01b0383165f908152600160205260408120805483929061032f908490610496565b90915550506001600160a01b0382165f908152600160205260408120805483929061035b9084906104a9565b92505081905550816001600160a01b0316836001600160a01b03167fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef836040516103a791815260200190565b60405180910390a3505050565b80356001600160a01b03811681146103ca575f5ffd5b919050565b5f5f604083850312156103e0575f5ffd5b6103e9836103b4565b946020939093013593505050565b5f5f5f60608486031215610409575f5ffd5b610412846103b4565b9250610420602085016103b4565b929592945050506040919091013590565b5f60208284031215610441575f5ffd5b61044a826103b4565b9392505050565b5f5f60408385031215610462575f5ffd5b61046b836103b4565b9150610479602084016103b4565b90509250929050565b634e487b7160e01b5f52601160045260245ffd5b818103818111156101c2576101c2610482565b808201808211156101c2576101c261048256fea164736f6c6343000825000a",
}

// Bytes32Token is an auto generated Go binding around an Ethereum contract.
type Bytes32Token struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *Bytes32Token) GetABI() abi.ABI {
	return c.abi
}

// NewBytes32Token creates a new instance of Bytes32Token.
func NewBytes32Token() *Bytes32Token {
	parsed, err := Bytes32TokenMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &Bytes32Token{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *Bytes32Token) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(bytes32 name_, bytes32 symbol_, uint256 decimals_, uint256 supply) returns()
func (bytes32Token *Bytes32Token) PackConstructor(name_ [32]byte, symbol_ [32]byte, decimals_ *big.Int, supply *big.Int) []byte {
	enc, err := bytes32Token.abi.Pack("", name_, symbol_, decimals_, supply)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (bytes32Token *Bytes32Token) PackAllowance(arg0 common.Address, arg1 common.Address) []byte {
	enc, err := bytes32Token.abi.Pack("allowance", arg0, arg1)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (bytes32Token *Bytes32Token) TryPackAllowance(arg0 common.Address, arg1 common.Address) ([]byte, error) {
	return bytes32Token.abi.Pack("allowance", arg0, arg1)
}

// UnpackAllowance is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xdd62ed3e.
//
// Solidity: function allowance(address , address ) view returns(uint256)
func (bytes32Token *Bytes32Token) UnpackAllowance(data []byte) (*big.Int, error) {
	out, err := bytes32Token.abi.Unpack("allowance", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) PackApprove(spender common.Address, value *big.Int) []byte {
	enc, err := bytes32Token.abi.Pack("approve", spender, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) TryPackApprove(spender common.Address, value *big.Int) ([]byte, error) {
	return bytes32Token.abi.Pack("approve", spender, value)
}

// UnpackApprove is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x095ea7b3.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) UnpackApprove(data []byte) (bool, error) {
	out, err := bytes32Token.abi.Unpack("approve", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (bytes32Token *Bytes32Token) PackBalanceOf(arg0 common.Address) []byte {
	enc, err := bytes32Token.abi.Pack("balanceOf", arg0)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (bytes32Token *Bytes32Token) TryPackBalanceOf(arg0 common.Address) ([]byte, error) {
	return bytes32Token.abi.Pack("balanceOf", arg0)
}

// UnpackBalanceOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x70a08231.
//
// Solidity: function balanceOf(address ) view returns(uint256)
func (bytes32Token *Bytes32Token) UnpackBalanceOf(data []byte) (*big.Int, error) {
	out, err := bytes32Token.abi.Unpack("balanceOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function decimals() view returns(uint256)
func (bytes32Token *Bytes32Token) PackDecimals() []byte {
	enc, err := bytes32Token.abi.Pack("decimals")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function decimals() view returns(uint256)
func (bytes32Token *Bytes32Token) TryPackDecimals() ([]byte, error) {
	return bytes32Token.abi.Pack("decimals")
}

// UnpackDecimals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x313ce567.
//
// Solidity: function decimals() view returns(uint256)
func (bytes32Token *Bytes32Token) UnpackDecimals(data []byte) (*big.Int, error) {
	out, err := bytes32Token.abi.Unpack("decimals", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function name() view returns(bytes32)
func (bytes32Token *Bytes32Token) PackName() []byte {
	enc, err := bytes32Token.abi.Pack("name")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function name() view returns(bytes32)
func (bytes32Token *Bytes32Token) TryPackName() ([]byte, error) {
	return bytes32Token.abi.Pack("name")
}

// UnpackName is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x06fdde03.
//
// Solidity: function name() view returns(bytes32)
func (bytes32Token *Bytes32Token) UnpackName(data []byte) ([32]byte, error) {
	out, err := bytes32Token.abi.Unpack("name", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function symbol() view returns(bytes32)
func (bytes32Token *Bytes32Token) PackSymbol() []byte {
	enc, err := bytes32Token.abi.Pack("symbol")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function symbol() view returns(bytes32)
func (bytes32Token *Bytes32Token) TryPackSymbol() ([]byte, error) {
	return bytes32Token.abi.Pack("symbol")
}

// UnpackSymbol is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x95d89b41.
//
// Solidity: function symbol() view returns(bytes32)
func (bytes32Token *Bytes32Token) UnpackSymbol(data []byte) ([32]byte, error) {
	out, err := bytes32Token.abi.Unpack("symbol", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalSupply() view returns(uint256)
func (bytes32Token *Bytes32Token) PackTotalSupply() []byte {
	enc, err := bytes32Token.abi.Pack("totalSupply")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalSupply() view returns(uint256)
func (bytes32Token *Bytes32Token) TryPackTotalSupply() ([]byte, error) {
	return bytes32Token.abi.Pack("totalSupply")
}

// UnpackTotalSupply is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x18160ddd.
//
// Solidity: function totalSupply() view returns(uint256)
func (bytes32Token *Bytes32Token) UnpackTotalSupply(data []byte) (*big.Int, error) {
	out, err := bytes32Token.abi.Unpack("totalSupply", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) PackTransfer(to common.Address, value *big.Int) []byte {
	enc, err := bytes32Token.abi.Pack("transfer", to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) TryPackTransfer(to common.Address, value *big.Int) ([]byte, error) {
	return bytes32Token.abi.Pack("transfer", to, value)
}

// UnpackTransfer is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa9059cbb.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) UnpackTransfer(data []byte) (bool, error) {
	out, err := bytes32Token.abi.Unpack("transfer", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) PackTransferFrom(from common.Address, to common.Address, value *big.Int) []byte {
	enc, err := bytes32Token.abi.Pack("transferFrom", from, to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) TryPackTransferFrom(from common.Address, to common.Address, value *big.Int) ([]byte, error) {
	return bytes32Token.abi.Pack("transferFrom", from, to, value)
}

// UnpackTransferFrom is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x23b872dd.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (bytes32Token *Bytes32Token) UnpackTransferFrom(data []byte) (bool, error) {
	out, err := bytes32Token.abi.Unpack("transferFrom", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// Bytes32TokenApproval represents a Approval event raised by the Bytes32Token contract.
type Bytes32TokenApproval struct {
	Owner   common.Address
	Spender common.Address
	Value   *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const Bytes32TokenApprovalEventName = "Approval"

// ContractEventName returns the user-defined event name.
func (Bytes32TokenApproval) ContractEventName() string {
	return Bytes32TokenApprovalEventName
}

// UnpackApprovalEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Approval(address indexed owner, address indexed spender, uint256 value)
func (bytes32Token *Bytes32Token) UnpackApprovalEvent(log *types.Log) (*Bytes32TokenApproval, error) {
	event := "Approval"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != bytes32Token.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(Bytes32TokenApproval)
	if len(log.Data) > 0 {
		if err := bytes32Token.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range bytes32Token.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// Bytes32TokenTransfer represents a Transfer event raised by the Bytes32Token contract.
type Bytes32TokenTransfer struct {
	From  common.Address
	To    common.Address
	Value *big.Int
	Raw   *types.Log // Blockchain specific contextual infos
}

const Bytes32TokenTransferEventName = "Transfer"

// ContractEventName returns the user-defined event name.
func (Bytes32TokenTransfer) ContractEventName() string {
	return Bytes32TokenTransferEventName
}

// UnpackTransferEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Transfer(address indexed from, address indexed to, uint256 value)
func (bytes32Token *Bytes32Token) UnpackTransferEvent(log *types.Log) (*Bytes32TokenTransfer, error) {
	event := "Transfer"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != bytes32Token.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(Bytes32TokenTransfer)
	if len(log.Data) > 0 {
		if err := bytes32Token.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range bytes32Token.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
