// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package usdc

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

// ERC3009DepositCollectorMetaData contains all meta data concerning the ERC3009DepositCollector contract.
var ERC3009DepositCollectorMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"name\":\"OnlyX402BatchSettlement\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TokenTransferFailed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes\",\"name\":\"collectorData\",\"type\":\"bytes\"}],\"name\":\"collect\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"x402BatchSettlement\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "ERC3009DepositCollector",
	Bin: "0x6080604052348015600e575f5ffd5b506104c38061001c5f395ff3fe608060405234801561000f575f5ffd5b5060043610610034575f3560e01c80634dec6d9514610038578063e416d8d31461006f575b5f5ffd5b610053734020074e9df2ce1dee5a9c1b5c3f541d02a1000381565b6040516001600160a01b03909116815260200160405180910390f35b61008261007d366004610284565b610084565b005b33734020074e9df2ce1dee5a9c1b5c3f541d02a10003146100b857604051639794beb960e01b815260040160405180910390fd5b5f8080806100c885870187610339565b9350935093509350886001600160a01b03166388b7ab638b308b88888d89604051602001610100929190918252602082015260400190565b60405160208183030381529060405280519060200120886040518863ffffffff1660e01b81526004016101399796959493929190610408565b5f604051808303815f87803b158015610150575f5ffd5b505af1158015610162573d5f5f3e3d5ffd5b505060408051734020074e9df2ce1dee5a9c1b5c3f541d02a10003602482015260448082018d905282518083039091018152606490910182526020810180516001600160e01b031663a9059cbb60e01b17905290515f93508392506001600160a01b038d16916101d19161047a565b5f604051808303815f865af19150503d805f811461020a576040519150601f19603f3d011682016040523d82523d5f602084013e61020f565b606091505b509150915081158061023d575080511580159061023d57508080602001905181019061023b9190610490565b155b1561025b5760405163022e258160e11b815260040160405180910390fd5b505050505050505050505050565b80356001600160a01b038116811461027f575f5ffd5b919050565b5f5f5f5f5f5f60a08789031215610299575f5ffd5b6102a287610269565b95506102b060208801610269565b94506040870135935060608701359250608087013567ffffffffffffffff8111156102d9575f5ffd5b8701601f810189136102e9575f5ffd5b803567ffffffffffffffff8111156102ff575f5ffd5b896020828401011115610310575f5ffd5b60208201935080925050509295509295509295565b634e487b7160e01b5f52604160045260245ffd5b5f5f5f5f6080858703121561034c575f5ffd5b843593506020850135925060408501359150606085013567ffffffffffffffff811115610377575f5ffd5b8501601f81018713610387575f5ffd5b803567ffffffffffffffff8111156103a1576103a1610325565b604051601f8201601f19908116603f0116810167ffffffffffffffff811182821017156103d0576103d0610325565b6040528181528282016020018910156103e7575f5ffd5b816020840160208301375f6020838301015280935050505092959194509250565b60018060a01b038816815260018060a01b03871660208201528560408201528460608201528360808201528260a082015260e060c08201525f82518060e0840152806020850161010085015e5f6101008285010152610100601f19601f83011684010191505098975050505050505050565b5f82518060208501845e5f920191825250919050565b5f602082840312156104a0575f5ffd5b815180151581146104af575f5ffd5b939250505056fea164736f6c6343000825000a",
}

// ERC3009DepositCollector is an auto generated Go binding around an Ethereum contract.
type ERC3009DepositCollector struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ERC3009DepositCollector) GetABI() abi.ABI {
	return c.abi
}

// NewERC3009DepositCollector creates a new instance of ERC3009DepositCollector.
func NewERC3009DepositCollector() *ERC3009DepositCollector {
	parsed, err := ERC3009DepositCollectorMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ERC3009DepositCollector{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ERC3009DepositCollector) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackCollect is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe416d8d3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData) returns()
func (eRC3009DepositCollector *ERC3009DepositCollector) PackCollect(payer common.Address, token common.Address, amount *big.Int, channelId [32]byte, collectorData []byte) []byte {
	enc, err := eRC3009DepositCollector.abi.Pack("collect", payer, token, amount, channelId, collectorData)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCollect is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe416d8d3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData) returns()
func (eRC3009DepositCollector *ERC3009DepositCollector) TryPackCollect(payer common.Address, token common.Address, amount *big.Int, channelId [32]byte, collectorData []byte) ([]byte, error) {
	return eRC3009DepositCollector.abi.Pack("collect", payer, token, amount, channelId, collectorData)
}

// PackX402BatchSettlement is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4dec6d95.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function x402BatchSettlement() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) PackX402BatchSettlement() []byte {
	enc, err := eRC3009DepositCollector.abi.Pack("x402BatchSettlement")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackX402BatchSettlement is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4dec6d95.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function x402BatchSettlement() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) TryPackX402BatchSettlement() ([]byte, error) {
	return eRC3009DepositCollector.abi.Pack("x402BatchSettlement")
}

// UnpackX402BatchSettlement is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x4dec6d95.
//
// Solidity: function x402BatchSettlement() view returns(address)
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackX402BatchSettlement(data []byte) (common.Address, error) {
	out, err := eRC3009DepositCollector.abi.Unpack("x402BatchSettlement", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], eRC3009DepositCollector.abi.Errors["OnlyX402BatchSettlement"].ID.Bytes()[:4]) {
		return eRC3009DepositCollector.UnpackOnlyX402BatchSettlementError(raw[4:])
	}
	if bytes.Equal(raw[:4], eRC3009DepositCollector.abi.Errors["TokenTransferFailed"].ID.Bytes()[:4]) {
		return eRC3009DepositCollector.UnpackTokenTransferFailedError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// ERC3009DepositCollectorOnlyX402BatchSettlement represents a OnlyX402BatchSettlement error raised by the ERC3009DepositCollector contract.
type ERC3009DepositCollectorOnlyX402BatchSettlement struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OnlyX402BatchSettlement()
func ERC3009DepositCollectorOnlyX402BatchSettlementErrorID() common.Hash {
	return common.HexToHash("0x9794beb9a4ed84875f4613850b52e4fda54022cdb5ef864ebc1d150c7987b10b")
}

// UnpackOnlyX402BatchSettlementError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OnlyX402BatchSettlement()
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackOnlyX402BatchSettlementError(raw []byte) (*ERC3009DepositCollectorOnlyX402BatchSettlement, error) {
	out := new(ERC3009DepositCollectorOnlyX402BatchSettlement)
	if err := eRC3009DepositCollector.abi.UnpackIntoInterface(out, "OnlyX402BatchSettlement", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// ERC3009DepositCollectorTokenTransferFailed represents a TokenTransferFailed error raised by the ERC3009DepositCollector contract.
type ERC3009DepositCollectorTokenTransferFailed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TokenTransferFailed()
func ERC3009DepositCollectorTokenTransferFailedErrorID() common.Hash {
	return common.HexToHash("0x045c4b02bfd1d72e80013ca423cc4ad578d2b3a61cfe3a46410880647bff4f57")
}

// UnpackTokenTransferFailedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TokenTransferFailed()
func (eRC3009DepositCollector *ERC3009DepositCollector) UnpackTokenTransferFailedError(raw []byte) (*ERC3009DepositCollectorTokenTransferFailed, error) {
	out := new(ERC3009DepositCollectorTokenTransferFailed)
	if err := eRC3009DepositCollector.abi.UnpackIntoInterface(out, "TokenTransferFailed", raw); err != nil {
		return nil, err
	}
	return out, nil
}
