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

// X402BatchSettlementChannelConfig is an auto generated low-level Go binding around an user-defined struct.
type X402BatchSettlementChannelConfig struct {
	Payer              common.Address
	PayerAuthorizer    common.Address
	Receiver           common.Address
	ReceiverAuthorizer common.Address
	Token              common.Address
	WithdrawDelay      *big.Int
	Salt               [32]byte
}

// X402BatchSettlementVoucher is an auto generated low-level Go binding around an user-defined struct.
type X402BatchSettlementVoucher struct {
	Channel            X402BatchSettlementChannelConfig
	MaxClaimableAmount *big.Int
}

// X402BatchSettlementVoucherClaim is an auto generated low-level Go binding around an user-defined struct.
type X402BatchSettlementVoucherClaim struct {
	Voucher      X402BatchSettlementVoucher
	Signature    []byte
	TotalClaimed *big.Int
}

// X402BatchSettlementMetaData contains all meta data concerning the X402BatchSettlement contract.
var X402BatchSettlementMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"name\":\"ClaimExceedsBalance\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ClaimExceedsCeiling\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"DepositCollectionFailed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"DepositOverflow\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"EmptyBatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidChannel\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidCollector\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidRefundNonce\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidSignature\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotAuthorizedToClaim\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotAuthorizedToFinalizeWithdraw\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotAuthorizedToRefund\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotReceiverAuthorizer\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NothingToWithdraw\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ReentrancyGuardReentrantCall\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TokenTransferFailed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"WithdrawAmountExceedsAvailable\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"WithdrawDelayNotElapsed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"WithdrawDelayOutOfRange\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"WithdrawalAlreadyPending\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"WithdrawalNotPending\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroDeposit\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroRefund\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"indexed\":false,\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"ChannelClosed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"indexed\":false,\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"ChannelCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"claimAmount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"newTotalClaimed\",\"type\":\"uint128\"}],\"name\":\"Claimed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"newBalance\",\"type\":\"uint128\"}],\"name\":\"Deposited\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[],\"name\":\"EIP712DomainChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"Settled\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"WithdrawFinalized\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"indexed\":false,\"internalType\":\"uint40\",\"name\":\"finalizeAfter\",\"type\":\"uint40\"}],\"name\":\"WithdrawInitiated\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"CHANNEL_CONFIG_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"CLAIM_BATCH_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"CLAIM_ENTRY_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"MAX_WITHDRAW_DELAY\",\"outputs\":[{\"internalType\":\"uint40\",\"name\":\"\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"MIN_WITHDRAW_DELAY\",\"outputs\":[{\"internalType\":\"uint40\",\"name\":\"\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"REFUND_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"VOUCHER_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"channels\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"balance\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"}],\"name\":\"claim\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"},{\"internalType\":\"bytes\",\"name\":\"authorizerSignature\",\"type\":\"bytes\"}],\"name\":\"claimWithSignature\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"address\",\"name\":\"collector\",\"type\":\"address\"},{\"internalType\":\"bytes\",\"name\":\"collectorData\",\"type\":\"bytes\"}],\"name\":\"deposit\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"eip712Domain\",\"outputs\":[{\"internalType\":\"bytes1\",\"name\":\"fields\",\"type\":\"bytes1\"},{\"internalType\":\"string\",\"name\":\"name\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"version\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"chainId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"verifyingContract\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[]\",\"name\":\"extensions\",\"type\":\"uint256[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"finalizeWithdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"}],\"name\":\"getChannelId\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"components\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"channel\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.Voucher\",\"name\":\"voucher\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"}],\"internalType\":\"structx402BatchSettlement.VoucherClaim[]\",\"name\":\"voucherClaims\",\"type\":\"tuple[]\"}],\"name\":\"getClaimBatchDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"getRefundDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint128\",\"name\":\"maxClaimableAmount\",\"type\":\"uint128\"}],\"name\":\"getVoucherDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"initiateWithdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes[]\",\"name\":\"data\",\"type\":\"bytes[]\"}],\"name\":\"multicall\",\"outputs\":[{\"internalType\":\"bytes[]\",\"name\":\"results\",\"type\":\"bytes[]\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"pendingWithdrawals\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"uint40\",\"name\":\"initiatedAt\",\"type\":\"uint40\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"receivers\",\"outputs\":[{\"internalType\":\"uint128\",\"name\":\"totalClaimed\",\"type\":\"uint128\"},{\"internalType\":\"uint128\",\"name\":\"totalSettled\",\"type\":\"uint128\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"refundNonce\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payerAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"receiverAuthorizer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint40\",\"name\":\"withdrawDelay\",\"type\":\"uint40\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structx402BatchSettlement.ChannelConfig\",\"name\":\"config\",\"type\":\"tuple\"},{\"internalType\":\"uint128\",\"name\":\"amount\",\"type\":\"uint128\"},{\"internalType\":\"uint256\",\"name\":\"nonce\",\"type\":\"uint256\"},{\"internalType\":\"bytes\",\"name\":\"receiverAuthorizerSignature\",\"type\":\"bytes\"}],\"name\":\"refundWithSignature\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"settle\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "X402BatchSettlement",
	Bin: "0x6080604052348015600e575f5ffd5b506129608061001c5f395ff3fe608060405234801561000f575f5ffd5b506004361061016d575f3560e01c806394739e87116100d9578063ba94ec0d11610093578063e25cf1891161006e578063e25cf18914610446578063e43ce1f214610459578063e88377b11461046c578063f0dc792e1461047f575f5ffd5b8063ba94ec0d146103f9578063cf5cf3dc14610420578063dce4bfae14610433575f5ffd5b806394739e87146103265780639db32a8f1461034d578063ac9650d814610360578063ae15943914610380578063b77433e914610389578063b7f06ebe1461039c575f5ffd5b806353ab0fae1161012a57806353ab0fae146102645780635e5e0b871461028b5780637a7ebd7b1461029e57806384b0196e146102d1578063862bb199146102ec5780638e4a68ac146102ff575f5ffd5b8063140f1e75146101715780631e69ef40146101865780631fc3277d146101c057806321ff6389146101e057806329237b0c1461023e578063488ccc3b14610251575b5f5ffd5b61018461017f3660046121bb565b61049e565b005b6101ad7fbe23ad087435072cd69b49cc5b92de10ee610fce7ae0ab428307972d764bb21681565b6040519081526020015b60405180910390f35b6101ca62278d0081565b60405164ffffffffff90911681526020016101b7565b61021e6101ee366004612230565b600360209081525f92835260408084209091529082529020546001600160801b0380821691600160801b90041682565b604080516001600160801b039384168152929091166020830152016101b7565b61018461024c3660046122a2565b610926565b6101ad61025f3660046122a2565b610a0c565b6101ad7f42bd57c010b870c2e96203c66341f28a6a19b4d56a74533a8eb5f706b9fd6d5781565b6101ad6102993660046122e1565b610d09565b61021e6102ac3660046122fb565b5f602081905290815260409020546001600160801b0380821691600160801b90041682565b6102d9610d40565b6040516101b79796959493929190612340565b6101ad6102fa3660046123d6565b610df2565b6101ad7f1c9a06ceab9b0ebbd3301dc56c9111bb6d9af421356dc9ccb3b7084c755db30881565b6101ad7f1e1bd6ff84c3e0d9029a292b212e039c0ca97ec497c55191a4a5874294609a6981565b61018461035b366004612230565b610e46565b61037361036e3660046122a2565b610f59565b6040516101b791906123f7565b6101ca61038481565b61018461039736600461245a565b611067565b6103d46103aa3660046122fb565b60026020525f90815260409020546001600160801b03811690600160801b900464ffffffffff1682565b604080516001600160801b03909316835264ffffffffff9091166020830152016101b7565b6101ad7f30b9a0367528fca13c3e8ec6134c3113f1887ebe7a1ad61de0955aac288b0cf581565b61018461042e3660046124ab565b61112d565b6101846104413660046124ab565b611337565b6101ad6104543660046124d5565b61139b565b610184610467366004612507565b6113f7565b61018461047a3660046122e1565b611548565b6101ad61048d3660046122fb565b60016020525f908152604090205481565b5f5160206129345f395f51905f52805c80156104cd57604051633ee5aeb560e01b815260040160405180910390fd5b6001825d5f6104df6020890189612573565b6001600160a01b0316148061050b57505f6105006060890160408a01612573565b6001600160a01b0316145b8061052d57505f6105226080890160608a01612573565b6001600160a01b0316145b8061054f57505f61054460a0890160808a01612573565b6001600160a01b0316145b1561056d5760405163ea3a9a3960e01b815260040160405180910390fd5b61038461058060c0890160a08a016125a0565b64ffffffffff1610806105ab575062278d006105a260c0890160a08a016125a0565b64ffffffffff16115b156105c9576040516322ba7d5b60e11b815260040160405180910390fd5b856001600160801b03165f036105f2576040516356316e8760e01b815260040160405180910390fd5b6001600160a01b0385166106195760405163062c6bf560e21b815260040160405180910390fd5b5f61062388610d09565b5f81815260208190526040902080549192509061064b906001600160801b03908116906125cd565b6001600160801b0316886001600160801b0316111561067d57604051631132981b60e01b815260040160405180910390fd5b8054889082905f906106999084906001600160801b03166125ec565b92506101000a8154816001600160801b0302191690836001600160801b031602179055505f8960800160208101906106d19190612573565b6040516370a0823160e01b81523060048201526001600160a01b0391909116906370a0823190602401602060405180830381865afa158015610715573d5f5f3e3d5ffd5b505050506040513d601f19601f82011682018060405250810190610739919061260b565b90506001600160a01b03881663e416d8d361075760208d018d612573565b61076760a08e0160808f01612573565b8c878c8c6040518763ffffffff1660e01b815260040161078c9695949392919061264a565b5f604051808303815f87803b1580156107a3575f5ffd5b505af11580156107b5573d5f5f3e3d5ffd5b50505050886001600160801b0316816107ce9190612698565b6107de60a08c0160808d01612573565b6040516370a0823160e01b81523060048201526001600160a01b0391909116906370a0823190602401602060405180830381865afa158015610822573d5f5f3e3d5ffd5b505050506040513d601f19601f82011682018060405250810190610846919061260b565b1461086457604051633ad0d64b60e21b815260040160405180910390fd5b81546001600160801b038a8116911614801561088f57508154600160801b90046001600160801b0316155b156108cd57827f69d8248d5566bdb2ebc4d218970710d8378a2ff9b709a999e052b71970f808fa8b6040516108c4919061274a565b60405180910390a25b8154604080516001600160801b03808d1682529092166020830152339185917f6c2a09353b5e75e70d0b9778b80a413809bb235d46c211811c474b3346791d89910160405180910390a35050505f825d50505050505050565b5f5160206129345f395f51905f52805c801561095557604051633ee5aeb560e01b815260040160405180910390fd5b6001825d5f83900361097a5760405163c2e5347d60e01b815260040160405180910390fd5b5f5b83811015610a02576109b13386868481811061099a5761099a612758565b90506020028101906109ac919061276c565b61182a565b6109ce5760405163defb706960e01b815260040160405180910390fd5b6109fa8585838181106109e3576109e3612758565b90506020028101906109f5919061276c565b611881565b60010161097c565b505f825d50505050565b5f808267ffffffffffffffff811115610a2757610a2761278b565b604051908082528060200260200182016040528015610a50578160200160208202803683370190505b5090505f5b83811015610b78577f30b9a0367528fca13c3e8ec6134c3113f1887ebe7a1ad61de0955aac288b0cf5610aa5868684818110610a9357610a93612758565b9050602002810190610299919061276c565b868684818110610ab757610ab7612758565b9050602002810190610ac9919061276c565b610adb9061010081019060e00161279f565b878785818110610aed57610aed612758565b9050602002810190610aff919061276c565b610b12906101408101906101200161279f565b6040805160208101959095528401929092526001600160801b03908116606084015216608082015260a00160405160208183030381529060405280519060200120828281518110610b6557610b65612758565b6020908102919091010152600101610a55565b50610cff7f42bd57c010b870c2e96203c66341f28a6a19b4d56a74533a8eb5f706b9fd6d5782604051602001610bae91906127b8565b60405160208183030381529060405280519060200120604051602001610bde929190918252602082015260400190565b6040516020818303038152906040528051906020012060408051808201825260158152741e0d0c0c8810985d18da0814d95d1d1b195b595b9d605a1b6020918201528151808301835260018152603160f81b9082015281517f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f818301527fe03c502b9066cc6f23a8f0f48ed32cb7d506f9f0a2d0055449f256846a770e9a818401527fc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc660608201524660808201523060a0808301919091528351808303909101815260c08201845280519083012061190160f01b60e083015260e2820152610102808201949094528251808203909401845261012201909152815191012090565b9150505b92915050565b5f610d037f1c9a06ceab9b0ebbd3301dc56c9111bb6d9af421356dc9ccb3b7084c755db30883604051602001610bde9291906127ed565b5f6060805f5f5f6060604051806040016040528060158152602001741e0d0c0c8810985d18da0814d95d1d1b195b595b9d605a1b815250604051806040016040528060018152602001603160f81b81525046305f5f1b5f67ffffffffffffffff811115610daf57610daf61278b565b604051908082528060200260200182016040528015610dd8578160200160208202803683370190505b50600f60f81b9d959c50939a509198509650945092509050565b604080517f1e1bd6ff84c3e0d9029a292b212e039c0ca97ec497c55191a4a5874294609a6960208201529081018390526001600160801b03821660608201525f90610e3f90608001610bde565b9392505050565b5f5160206129345f395f51905f52805c8015610e7557604051633ee5aeb560e01b815260040160405180910390fd5b6001825d6001600160a01b038085165f90815260036020908152604080832093871683529290529081208054909190610ec0906001600160801b03600160801b8204811691166125cd565b9050806001600160801b03165f03610ed9575050610f50565b81546001600160801b03908116600160801b8102178355610eff90869088908416611b92565b6040516001600160801b038216815233906001600160a01b0387811691908916907f7337b4386b690fdb8ba66905b92b9d45d33bc6626ee2620c905fb150ec0cc47d9060200160405180910390a450505b5f825d50505050565b60608167ffffffffffffffff811115610f7457610f7461278b565b604051908082528060200260200182016040528015610fa757816020015b6060815260200190600190039081610f925790505b5090505f5b82811015611060575f8030868685818110610fc957610fc9612758565b9050602002810190610fdb9190612802565b604051610fe9929190612845565b5f60405180830381855af49150503d805f8114611021576040519150601f19603f3d011682016040523d82523d5f602084013e611026565b606091505b50915091508161103857805160208201fd5b8084848151811061104b5761104b612758565b60209081029190910101525050600101610fac565b5092915050565b5f5160206129345f395f51905f52805c801561109657604051633ee5aeb560e01b815260040160405180910390fd5b6001825d5f6110a488610d09565b5f8181526001602052604090205490915086146110d457604051630b278d7f60e11b815260040160405180910390fd5b6110f96110e760808a0160608b01612573565b6110f283898b61139b565b8787611c7e565b61111657604051638baa579f60e01b815260040160405180910390fd5b6111208888611dbe565b505f825d50505050505050565b5f5160206129345f395f51905f52805c801561115c57604051633ee5aeb560e01b815260040160405180910390fd5b6001825d61116d6020850185612573565b6001600160a01b0316336001600160a01b0316141580156111af57506111996040850160208601612573565b6001600160a01b0316336001600160a01b031614155b156111cd5760405163ea3a9a3960e01b815260040160405180910390fd5b826001600160801b03165f036111f657604051630686827b60e51b815260040160405180910390fd5b5f61120085610d09565b5f818152600260205260409020805491925090600160801b900464ffffffffff161561123f57604051630a2aed0f60e41b815260040160405180910390fd5b5f828152602081905260409020805461126a906001600160801b03600160801b8204811691166125cd565b6001600160801b0316866001600160801b0316111561129c57604051631b4f55d960e21b815260040160405180910390fd5b815464ffffffffff4216600160801b026001600160a81b03199091166001600160801b03881617178255827fe4280d0d903c7f258f62b07c62f262377cbaa23f7791d78126e6446e0f0e3c23876112f960c08b0160a08c016125a0565b6113039042612854565b604080516001600160801b03909316835264ffffffffff90911660208301520160405180910390a25050505f825d50505050565b5f5160206129345f395f51905f52805c801561136657604051633ee5aeb560e01b815260040160405180910390fd5b6001825d611374338561182a565b61139157604051630f0c9e0160e31b815260040160405180910390fd5b610f508484611dbe565b604080517fbe23ad087435072cd69b49cc5b92de10ee610fce7ae0ab428307972d764bb2166020820152908101849052606081018390526001600160801b03821660808201525f906113ef9060a001610bde565b949350505050565b5f5160206129345f395f51905f52805c801561142657604051633ee5aeb560e01b815260040160405180910390fd5b6001825d5f85900361144b5760405163c2e5347d60e01b815260040160405180910390fd5b5f86865f81811061145e5761145e612758565b9050602002810190611470919061276c565b611481906080810190606001612573565b9050611491816110f28989610a0c565b6114ae57604051638baa579f60e01b815260040160405180910390fd5b5f5b8681101561153b57816001600160a01b03168888838181106114d4576114d4612758565b90506020028101906114e6919061276c565b6114f7906080810190606001612573565b6001600160a01b03161461151e5760405163f5e2237d60e01b815260040160405180910390fd5b6115338888838181106109e3576109e3612758565b6001016114b0565b50505f825d505050505050565b5f5160206129345f395f51905f52805c801561157757604051633ee5aeb560e01b815260040160405180910390fd5b6001825d6115886020840184612573565b6001600160a01b0316336001600160a01b0316141580156115ca57506115b46040840160208501612573565b6001600160a01b0316336001600160a01b031614155b156115e8576040516315f969d560e01b815260040160405180910390fd5b5f6115f284610d09565b5f818152600260205260408120805492935091600160801b900464ffffffffff16900361163257604051631d050e5360e11b815260040160405180910390fd5b61164260c0860160a087016125a0565b815461165f9164ffffffffff90811691600160801b900416612698565b42101561167f5760405163f396582760e01b815260040160405180910390fd5b5f82815260208190526040812080549091906116ad906001600160801b03600160801b8204811691166125cd565b83549091505f906001600160801b038084169116106116cc57816116d8565b83546001600160801b03165b84546001600160a81b03191685558354909150819084905f906117059084906001600160801b03166125cd565b92506101000a8154816001600160801b0302191690836001600160801b03160217905550336001600160a01b0316857f546ce1e2242cd930c196bd08b894443562d709b4fffe4f028a75a6d233efc6e38360405161177291906001600160801b0391909116815260200190565b60405180910390a382546001600160801b03161580156117a157508254600160801b90046001600160801b0316155b156117df57847f8d5942f197f362dfd44dfdc1b0b7a9721c9151b67f55817c83349271d3c08d37896040516117d6919061274a565b60405180910390a25b6001600160801b0381161561181d5761181d61180160a08a0160808b01612573565b61180e60208b018b612573565b836001600160801b0316611b92565b50505050505f825d505050565b5f61183b6080830160608401612573565b6001600160a01b0316836001600160a01b03161480610e3f57506118656060830160408401612573565b6001600160a01b0316836001600160a01b031614905092915050565b5f61188b82610d09565b5f818152602081905260409020805491925090600160801b90046001600160801b03166118c06101408501610120860161279f565b6001600160801b0316116118d357505050565b6118e4610100840160e0850161279f565b6001600160801b03166118ff6101408501610120860161279f565b6001600160801b031611156119275760405163f178977560e01b815260040160405180910390fd5b80546001600160801b03166119446101408501610120860161279f565b6001600160801b0316111561196c57604051633ec1215b60e11b815260040160405180910390fd5b5f611982836102fa610100870160e0880161279f565b90505f6119956040860160208701612573565b90506001600160a01b038116156119f3576001600160a01b0381166119c7836119c2610100890189612802565b612016565b6001600160a01b0316146119ee57604051638baa579f60e01b815260040160405180910390fd5b611a34565b611a17611a036020870187612573565b83611a12610100890189612802565b611c7e565b611a3457604051638baa579f60e01b815260040160405180910390fd5b82545f90600160801b90046001600160801b0316611a5a6101408801610120890161279f565b611a6491906125cd565b9050611a786101408701610120880161279f565b84546001600160801b03918216600160801b0291161784558060035f611aa460608a0160408b01612573565b6001600160a01b0316815260208101919091526040015f90812090611acf60a08a0160808b01612573565b6001600160a01b0316815260208101919091526040015f9081208054909190611b029084906001600160801b03166125ec565b92506101000a8154816001600160801b0302191690836001600160801b03160217905550336001600160a01b0316857f36bd546bb573e8921fdbfd934bbed62d872796b01792cd240cce27f79dd3eddd8389610120016020810190611b67919061279f565b604080516001600160801b0393841681529290911660208301520160405180910390a3505050505050565b604080516001600160a01b038481166024830152604480830185905283518084039091018152606490920183526020820180516001600160e01b031663a9059cbb60e01b17905291515f92839290871691611bed9190612871565b5f604051808303815f865af19150503d805f8114611c26576040519150601f19603f3d011682016040523d82523d5f602084013e611c2b565b606091505b5091509150811580611c595750805115801590611c59575080806020019051810190611c579190612887565b155b15611c775760405163022e258160e11b815260040160405180910390fd5b5050505050565b5f846001600160a01b03163b5f03611cca576001600160a01b03851615801590611cc35750846001600160a01b0316611cb8858585612016565b6001600160a01b0316145b90506113ef565b5f5f866001600160a01b0316631626ba7e60e01b878787604051602401611cf3939291906128a6565b60408051601f198184030181529181526020820180516001600160e01b03166001600160e01b0319909416939093179092529051611d319190612871565b5f60405180830381855afa9150503d805f8114611d69576040519150601f19603f3d011682016040523d82523d5f602084013e611d6e565b606091505b5091509150818015611d8257506020815110155b8015611db357508051630b135d3f60e11b90611da790830160209081019084016128c8565b6001600160e01b031916145b979650505050505050565b806001600160801b03165f03611de7576040516335d6149760e21b815260040160405180910390fd5b5f611df183610d09565b5f81815260016020818152604080842080549093019092558290528120805492935091611e30906001600160801b03600160801b8204811691166125cd565b90505f816001600160801b0316856001600160801b031610611e525781611e54565b845b9050806001600160801b03165f03611e6e57505050505050565b8254819084905f90611e8a9084906001600160801b03166125cd565b82546001600160801b039182166101009390930a9283029190920219909116179055505f848152600260205260409020805464ffffffffff600160801b9091041615611f395780546001600160801b0390811690831610611ef85780546001600160a81b0319168155611f39565b8054829082905f90611f149084906001600160801b03166125cd565b92506101000a8154816001600160801b0302191690836001600160801b031602179055505b6040516001600160801b0383168152339086907fa84286cf8ebc7903a663c77c8d99aa92b600d4c2fcca872a5d4a663db4eb394b9060200160405180910390a383546001600160801b0316158015611fa057508354600160801b90046001600160801b0316155b15611fde57847f8d5942f197f362dfd44dfdc1b0b7a9721c9151b67f55817c83349271d3c08d3788604051611fd5919061274a565b60405180910390a25b61200d611ff160a0890160808a01612573565b611ffe60208a018a612573565b846001600160801b0316611b92565b50505050505050565b5f6041821461202657505f610e3f565b5f61203460208285876128ef565b61203d91612916565b90505f61204e6040602086886128ef565b61205791612916565b90505f8585604081811061206d5761206d612758565b919091013560f81c9150507f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a08211806120b957508060ff16601b141580156120b957508060ff16601c14155b156120c9575f9350505050610e3f565b604080515f81526020810180835289905260ff831691810191909152606081018490526080810183905260019060a0016020604051602081039080840390855afa158015612119573d5f5f3e3d5ffd5b5050604051601f19015198975050505050505050565b5f60e0828403121561213f575f5ffd5b50919050565b80356001600160801b038116811461215b575f5ffd5b919050565b80356001600160a01b038116811461215b575f5ffd5b5f5f83601f840112612186575f5ffd5b50813567ffffffffffffffff81111561219d575f5ffd5b6020830191508360208285010111156121b4575f5ffd5b9250929050565b5f5f5f5f5f61014086880312156121d0575f5ffd5b6121da878761212f565b94506121e860e08701612145565b93506121f76101008701612160565b925061012086013567ffffffffffffffff811115612213575f5ffd5b61221f88828901612176565b969995985093965092949392505050565b5f5f60408385031215612241575f5ffd5b61224a83612160565b915061225860208401612160565b90509250929050565b5f5f83601f840112612271575f5ffd5b50813567ffffffffffffffff811115612288575f5ffd5b6020830191508360208260051b85010111156121b4575f5ffd5b5f5f602083850312156122b3575f5ffd5b823567ffffffffffffffff8111156122c9575f5ffd5b6122d585828601612261565b90969095509350505050565b5f60e082840312156122f1575f5ffd5b610e3f838361212f565b5f6020828403121561230b575f5ffd5b5035919050565b5f81518084528060208401602086015e5f602082860101526020601f19601f83011685010191505092915050565b60ff60f81b8816815260e060208201525f61235e60e0830189612312565b82810360408401526123708189612312565b606084018890526001600160a01b038716608085015260a0840186905283810360c0850152845180825260208087019350909101905f5b818110156123c55783518352602093840193909201916001016123a7565b50909b9a5050505050505050505050565b5f5f604083850312156123e7575f5ffd5b8235915061225860208401612145565b5f602082016020835280845180835260408501915060408160051b8601019250602086015f5b8281101561244e57603f19878603018452612439858351612312565b9450602093840193919091019060010161241d565b50929695505050505050565b5f5f5f5f5f610140868803121561246f575f5ffd5b612479878761212f565b945061248760e08701612145565b9350610100860135925061012086013567ffffffffffffffff811115612213575f5ffd5b5f5f61010083850312156124bd575f5ffd5b6124c7848461212f565b915061225860e08401612145565b5f5f5f606084860312156124e7575f5ffd5b83359250602084013591506124fe60408501612145565b90509250925092565b5f5f5f5f6040858703121561251a575f5ffd5b843567ffffffffffffffff811115612530575f5ffd5b61253c87828801612261565b909550935050602085013567ffffffffffffffff81111561255b575f5ffd5b61256787828801612176565b95989497509550505050565b5f60208284031215612583575f5ffd5b610e3f82612160565b803564ffffffffff8116811461215b575f5ffd5b5f602082840312156125b0575f5ffd5b610e3f8261258c565b634e487b7160e01b5f52601160045260245ffd5b6001600160801b038281168282160390811115610d0357610d036125b9565b6001600160801b038181168382160190811115610d0357610d036125b9565b5f6020828403121561261b575f5ffd5b5051919050565b81835281816020850137505f828201602090810191909152601f909101601f19169091010190565b6001600160a01b038781168252861660208201526001600160801b03851660408201526060810184905260a0608082018190525f9061268c9083018486612622565b98975050505050505050565b80820180821115610d0357610d036125b9565b6001600160a01b036126bc82612160565b1682526001600160a01b036126d360208301612160565b1660208301526001600160a01b036126ed60408301612160565b1660408301526001600160a01b0361270760608301612160565b1660608301526001600160a01b0361272160808301612160565b16608083015261273360a0820161258c565b64ffffffffff1660a083015260c090810135910152565b60e08101610d0382846126ab565b634e487b7160e01b5f52603260045260245ffd5b5f823561013e19833603018112612781575f5ffd5b9190910192915050565b634e487b7160e01b5f52604160045260245ffd5b5f602082840312156127af575f5ffd5b610e3f82612145565b81515f90829060208501835b828110156127e25781518452602093840193909101906001016127c4565b509195945050505050565b8281526101008101610e3f60208301846126ab565b5f5f8335601e19843603018112612817575f5ffd5b83018035915067ffffffffffffffff821115612831575f5ffd5b6020019150368190038213156121b4575f5ffd5b818382375f9101908152919050565b64ffffffffff8181168382160190811115610d0357610d036125b9565b5f82518060208501845e5f920191825250919050565b5f60208284031215612897575f5ffd5b81518015158114610e3f575f5ffd5b838152604060208201525f6128bf604083018486612622565b95945050505050565b5f602082840312156128d8575f5ffd5b81516001600160e01b031981168114610e3f575f5ffd5b5f5f858511156128fd575f5ffd5b83861115612909575f5ffd5b5050820193919092039150565b80356020831015610d03575f19602084900360031b1b169291505056fe62328774fc907f8181d8523e91939be2c2433db959801e8b2bbdb02c68182943a164736f6c6343000825000a",
}

// X402BatchSettlement is an auto generated Go binding around an Ethereum contract.
type X402BatchSettlement struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *X402BatchSettlement) GetABI() abi.ABI {
	return c.abi
}

// NewX402BatchSettlement creates a new instance of X402BatchSettlement.
func NewX402BatchSettlement() *X402BatchSettlement {
	parsed, err := X402BatchSettlementMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &X402BatchSettlement{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *X402BatchSettlement) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackCHANNELCONFIGTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e4a68ac.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackCHANNELCONFIGTYPEHASH() []byte {
	enc, err := x402BatchSettlement.abi.Pack("CHANNEL_CONFIG_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCHANNELCONFIGTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8e4a68ac.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackCHANNELCONFIGTYPEHASH() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("CHANNEL_CONFIG_TYPEHASH")
}

// UnpackCHANNELCONFIGTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8e4a68ac.
//
// Solidity: function CHANNEL_CONFIG_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackCHANNELCONFIGTYPEHASH(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("CHANNEL_CONFIG_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCLAIMBATCHTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x53ab0fae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackCLAIMBATCHTYPEHASH() []byte {
	enc, err := x402BatchSettlement.abi.Pack("CLAIM_BATCH_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMBATCHTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x53ab0fae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackCLAIMBATCHTYPEHASH() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("CLAIM_BATCH_TYPEHASH")
}

// UnpackCLAIMBATCHTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x53ab0fae.
//
// Solidity: function CLAIM_BATCH_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackCLAIMBATCHTYPEHASH(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("CLAIM_BATCH_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCLAIMENTRYTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba94ec0d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackCLAIMENTRYTYPEHASH() []byte {
	enc, err := x402BatchSettlement.abi.Pack("CLAIM_ENTRY_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCLAIMENTRYTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xba94ec0d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackCLAIMENTRYTYPEHASH() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("CLAIM_ENTRY_TYPEHASH")
}

// UnpackCLAIMENTRYTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xba94ec0d.
//
// Solidity: function CLAIM_ENTRY_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackCLAIMENTRYTYPEHASH(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("CLAIM_ENTRY_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackMAXWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1fc3277d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) PackMAXWITHDRAWDELAY() []byte {
	enc, err := x402BatchSettlement.abi.Pack("MAX_WITHDRAW_DELAY")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1fc3277d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) TryPackMAXWITHDRAWDELAY() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("MAX_WITHDRAW_DELAY")
}

// UnpackMAXWITHDRAWDELAY is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1fc3277d.
//
// Solidity: function MAX_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) UnpackMAXWITHDRAWDELAY(data []byte) (*big.Int, error) {
	out, err := x402BatchSettlement.abi.Unpack("MAX_WITHDRAW_DELAY", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackMINWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae159439.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) PackMINWITHDRAWDELAY() []byte {
	enc, err := x402BatchSettlement.abi.Pack("MIN_WITHDRAW_DELAY")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMINWITHDRAWDELAY is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xae159439.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) TryPackMINWITHDRAWDELAY() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("MIN_WITHDRAW_DELAY")
}

// UnpackMINWITHDRAWDELAY is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xae159439.
//
// Solidity: function MIN_WITHDRAW_DELAY() view returns(uint40)
func (x402BatchSettlement *X402BatchSettlement) UnpackMINWITHDRAWDELAY(data []byte) (*big.Int, error) {
	out, err := x402BatchSettlement.abi.Unpack("MIN_WITHDRAW_DELAY", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackREFUNDTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1e69ef40.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackREFUNDTYPEHASH() []byte {
	enc, err := x402BatchSettlement.abi.Pack("REFUND_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackREFUNDTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1e69ef40.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackREFUNDTYPEHASH() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("REFUND_TYPEHASH")
}

// UnpackREFUNDTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1e69ef40.
//
// Solidity: function REFUND_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackREFUNDTYPEHASH(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("REFUND_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackVOUCHERTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x94739e87.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackVOUCHERTYPEHASH() []byte {
	enc, err := x402BatchSettlement.abi.Pack("VOUCHER_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVOUCHERTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x94739e87.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackVOUCHERTYPEHASH() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("VOUCHER_TYPEHASH")
}

// UnpackVOUCHERTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x94739e87.
//
// Solidity: function VOUCHER_TYPEHASH() view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackVOUCHERTYPEHASH(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("VOUCHER_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (x402BatchSettlement *X402BatchSettlement) PackChannels(channelId [32]byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("channels", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (x402BatchSettlement *X402BatchSettlement) TryPackChannels(channelId [32]byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("channels", channelId)
}

// ChannelsOutput serves as a container for the return parameters of contract
// method Channels.
type ChannelsOutput struct {
	Balance      *big.Int
	TotalClaimed *big.Int
}

// UnpackChannels is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7a7ebd7b.
//
// Solidity: function channels(bytes32 channelId) view returns(uint128 balance, uint128 totalClaimed)
func (x402BatchSettlement *X402BatchSettlement) UnpackChannels(data []byte) (ChannelsOutput, error) {
	out, err := x402BatchSettlement.abi.Unpack("channels", data)
	outstruct := new(ChannelsOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Balance = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.TotalClaimed = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x29237b0c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claim((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) returns()
func (x402BatchSettlement *X402BatchSettlement) PackClaim(voucherClaims []X402BatchSettlementVoucherClaim) []byte {
	enc, err := x402BatchSettlement.abi.Pack("claim", voucherClaims)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaim is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x29237b0c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claim((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackClaim(voucherClaims []X402BatchSettlementVoucherClaim) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("claim", voucherClaims)
}

// PackClaimWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe43ce1f2.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function claimWithSignature((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims, bytes authorizerSignature) returns()
func (x402BatchSettlement *X402BatchSettlement) PackClaimWithSignature(voucherClaims []X402BatchSettlementVoucherClaim, authorizerSignature []byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("claimWithSignature", voucherClaims, authorizerSignature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClaimWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe43ce1f2.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function claimWithSignature((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims, bytes authorizerSignature) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackClaimWithSignature(voucherClaims []X402BatchSettlementVoucherClaim, authorizerSignature []byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("claimWithSignature", voucherClaims, authorizerSignature)
}

// PackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x140f1e75.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function deposit((address,address,address,address,address,uint40,bytes32) config, uint128 amount, address collector, bytes collectorData) returns()
func (x402BatchSettlement *X402BatchSettlement) PackDeposit(config X402BatchSettlementChannelConfig, amount *big.Int, collector common.Address, collectorData []byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("deposit", config, amount, collector, collectorData)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDeposit is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x140f1e75.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function deposit((address,address,address,address,address,uint40,bytes32) config, uint128 amount, address collector, bytes collectorData) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackDeposit(config X402BatchSettlementChannelConfig, amount *big.Int, collector common.Address, collectorData []byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("deposit", config, amount, collector, collectorData)
}

// PackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (x402BatchSettlement *X402BatchSettlement) PackEip712Domain() []byte {
	enc, err := x402BatchSettlement.abi.Pack("eip712Domain")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (x402BatchSettlement *X402BatchSettlement) TryPackEip712Domain() ([]byte, error) {
	return x402BatchSettlement.abi.Pack("eip712Domain")
}

// Eip712DomainOutput serves as a container for the return parameters of contract
// method Eip712Domain.
type Eip712DomainOutput struct {
	Fields            [1]byte
	Name              string
	Version           string
	ChainId           *big.Int
	VerifyingContract common.Address
	Salt              [32]byte
	Extensions        []*big.Int
}

// UnpackEip712Domain is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x84b0196e.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (x402BatchSettlement *X402BatchSettlement) UnpackEip712Domain(data []byte) (Eip712DomainOutput, error) {
	out, err := x402BatchSettlement.abi.Unpack("eip712Domain", data)
	outstruct := new(Eip712DomainOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Fields = *abi.ConvertType(out[0], new([1]byte)).(*[1]byte)
	outstruct.Name = *abi.ConvertType(out[1], new(string)).(*string)
	outstruct.Version = *abi.ConvertType(out[2], new(string)).(*string)
	outstruct.ChainId = abi.ConvertType(out[3], new(big.Int)).(*big.Int)
	outstruct.VerifyingContract = *abi.ConvertType(out[4], new(common.Address)).(*common.Address)
	outstruct.Salt = *abi.ConvertType(out[5], new([32]byte)).(*[32]byte)
	outstruct.Extensions = *abi.ConvertType(out[6], new([]*big.Int)).(*[]*big.Int)
	return *outstruct, nil
}

// PackFinalizeWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe88377b1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function finalizeWithdraw((address,address,address,address,address,uint40,bytes32) config) returns()
func (x402BatchSettlement *X402BatchSettlement) PackFinalizeWithdraw(config X402BatchSettlementChannelConfig) []byte {
	enc, err := x402BatchSettlement.abi.Pack("finalizeWithdraw", config)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackFinalizeWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe88377b1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function finalizeWithdraw((address,address,address,address,address,uint40,bytes32) config) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackFinalizeWithdraw(config X402BatchSettlementChannelConfig) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("finalizeWithdraw", config)
}

// PackGetChannelId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e5e0b87.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackGetChannelId(config X402BatchSettlementChannelConfig) []byte {
	enc, err := x402BatchSettlement.abi.Pack("getChannelId", config)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetChannelId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5e5e0b87.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackGetChannelId(config X402BatchSettlementChannelConfig) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("getChannelId", config)
}

// UnpackGetChannelId is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5e5e0b87.
//
// Solidity: function getChannelId((address,address,address,address,address,uint40,bytes32) config) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackGetChannelId(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("getChannelId", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetClaimBatchDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x488ccc3b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackGetClaimBatchDigest(voucherClaims []X402BatchSettlementVoucherClaim) []byte {
	enc, err := x402BatchSettlement.abi.Pack("getClaimBatchDigest", voucherClaims)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetClaimBatchDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x488ccc3b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackGetClaimBatchDigest(voucherClaims []X402BatchSettlementVoucherClaim) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("getClaimBatchDigest", voucherClaims)
}

// UnpackGetClaimBatchDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x488ccc3b.
//
// Solidity: function getClaimBatchDigest((((address,address,address,address,address,uint40,bytes32),uint128),bytes,uint128)[] voucherClaims) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackGetClaimBatchDigest(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("getClaimBatchDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetRefundDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe25cf189.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackGetRefundDigest(channelId [32]byte, nonce *big.Int, amount *big.Int) []byte {
	enc, err := x402BatchSettlement.abi.Pack("getRefundDigest", channelId, nonce, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetRefundDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe25cf189.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackGetRefundDigest(channelId [32]byte, nonce *big.Int, amount *big.Int) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("getRefundDigest", channelId, nonce, amount)
}

// UnpackGetRefundDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe25cf189.
//
// Solidity: function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackGetRefundDigest(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("getRefundDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetVoucherDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x862bb199.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) PackGetVoucherDigest(channelId [32]byte, maxClaimableAmount *big.Int) []byte {
	enc, err := x402BatchSettlement.abi.Pack("getVoucherDigest", channelId, maxClaimableAmount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetVoucherDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x862bb199.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) TryPackGetVoucherDigest(channelId [32]byte, maxClaimableAmount *big.Int) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("getVoucherDigest", channelId, maxClaimableAmount)
}

// UnpackGetVoucherDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x862bb199.
//
// Solidity: function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns(bytes32)
func (x402BatchSettlement *X402BatchSettlement) UnpackGetVoucherDigest(data []byte) ([32]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("getVoucherDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackInitiateWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xcf5cf3dc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function initiateWithdraw((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (x402BatchSettlement *X402BatchSettlement) PackInitiateWithdraw(config X402BatchSettlementChannelConfig, amount *big.Int) []byte {
	enc, err := x402BatchSettlement.abi.Pack("initiateWithdraw", config, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackInitiateWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xcf5cf3dc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function initiateWithdraw((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackInitiateWithdraw(config X402BatchSettlementChannelConfig, amount *big.Int) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("initiateWithdraw", config, amount)
}

// PackMulticall is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xac9650d8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (x402BatchSettlement *X402BatchSettlement) PackMulticall(data [][]byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("multicall", data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMulticall is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xac9650d8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (x402BatchSettlement *X402BatchSettlement) TryPackMulticall(data [][]byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("multicall", data)
}

// UnpackMulticall is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xac9650d8.
//
// Solidity: function multicall(bytes[] data) returns(bytes[] results)
func (x402BatchSettlement *X402BatchSettlement) UnpackMulticall(data []byte) ([][]byte, error) {
	out, err := x402BatchSettlement.abi.Unpack("multicall", data)
	if err != nil {
		return *new([][]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([][]byte)).(*[][]byte)
	return out0, nil
}

// PackPendingWithdrawals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb7f06ebe.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (x402BatchSettlement *X402BatchSettlement) PackPendingWithdrawals(channelId [32]byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("pendingWithdrawals", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPendingWithdrawals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb7f06ebe.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (x402BatchSettlement *X402BatchSettlement) TryPackPendingWithdrawals(channelId [32]byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("pendingWithdrawals", channelId)
}

// PendingWithdrawalsOutput serves as a container for the return parameters of contract
// method PendingWithdrawals.
type PendingWithdrawalsOutput struct {
	Amount      *big.Int
	InitiatedAt *big.Int
}

// UnpackPendingWithdrawals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb7f06ebe.
//
// Solidity: function pendingWithdrawals(bytes32 channelId) view returns(uint128 amount, uint40 initiatedAt)
func (x402BatchSettlement *X402BatchSettlement) UnpackPendingWithdrawals(data []byte) (PendingWithdrawalsOutput, error) {
	out, err := x402BatchSettlement.abi.Unpack("pendingWithdrawals", data)
	outstruct := new(PendingWithdrawalsOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Amount = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.InitiatedAt = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackReceivers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x21ff6389.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (x402BatchSettlement *X402BatchSettlement) PackReceivers(receiver common.Address, token common.Address) []byte {
	enc, err := x402BatchSettlement.abi.Pack("receivers", receiver, token)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReceivers is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x21ff6389.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (x402BatchSettlement *X402BatchSettlement) TryPackReceivers(receiver common.Address, token common.Address) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("receivers", receiver, token)
}

// ReceiversOutput serves as a container for the return parameters of contract
// method Receivers.
type ReceiversOutput struct {
	TotalClaimed *big.Int
	TotalSettled *big.Int
}

// UnpackReceivers is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x21ff6389.
//
// Solidity: function receivers(address receiver, address token) view returns(uint128 totalClaimed, uint128 totalSettled)
func (x402BatchSettlement *X402BatchSettlement) UnpackReceivers(data []byte) (ReceiversOutput, error) {
	out, err := x402BatchSettlement.abi.Unpack("receivers", data)
	outstruct := new(ReceiversOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.TotalClaimed = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.TotalSettled = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdce4bfae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refund((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (x402BatchSettlement *X402BatchSettlement) PackRefund(config X402BatchSettlementChannelConfig, amount *big.Int) []byte {
	enc, err := x402BatchSettlement.abi.Pack("refund", config, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdce4bfae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refund((address,address,address,address,address,uint40,bytes32) config, uint128 amount) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackRefund(config X402BatchSettlementChannelConfig, amount *big.Int) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("refund", config, amount)
}

// PackRefundNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0dc792e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (x402BatchSettlement *X402BatchSettlement) PackRefundNonce(channelId [32]byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("refundNonce", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundNonce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0dc792e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (x402BatchSettlement *X402BatchSettlement) TryPackRefundNonce(channelId [32]byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("refundNonce", channelId)
}

// UnpackRefundNonce is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf0dc792e.
//
// Solidity: function refundNonce(bytes32 channelId) view returns(uint256)
func (x402BatchSettlement *X402BatchSettlement) UnpackRefundNonce(data []byte) (*big.Int, error) {
	out, err := x402BatchSettlement.abi.Unpack("refundNonce", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRefundWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb77433e9.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refundWithSignature((address,address,address,address,address,uint40,bytes32) config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature) returns()
func (x402BatchSettlement *X402BatchSettlement) PackRefundWithSignature(config X402BatchSettlementChannelConfig, amount *big.Int, nonce *big.Int, receiverAuthorizerSignature []byte) []byte {
	enc, err := x402BatchSettlement.abi.Pack("refundWithSignature", config, amount, nonce, receiverAuthorizerSignature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefundWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb77433e9.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refundWithSignature((address,address,address,address,address,uint40,bytes32) config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackRefundWithSignature(config X402BatchSettlementChannelConfig, amount *big.Int, nonce *big.Int, receiverAuthorizerSignature []byte) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("refundWithSignature", config, amount, nonce, receiverAuthorizerSignature)
}

// PackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9db32a8f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(address receiver, address token) returns()
func (x402BatchSettlement *X402BatchSettlement) PackSettle(receiver common.Address, token common.Address) []byte {
	enc, err := x402BatchSettlement.abi.Pack("settle", receiver, token)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x9db32a8f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(address receiver, address token) returns()
func (x402BatchSettlement *X402BatchSettlement) TryPackSettle(receiver common.Address, token common.Address) ([]byte, error) {
	return x402BatchSettlement.abi.Pack("settle", receiver, token)
}

// X402BatchSettlementChannelClosed represents a ChannelClosed event raised by the X402BatchSettlement contract.
type X402BatchSettlementChannelClosed struct {
	ChannelId [32]byte
	Config    X402BatchSettlementChannelConfig
	Raw       *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementChannelClosedEventName = "ChannelClosed"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementChannelClosed) ContractEventName() string {
	return X402BatchSettlementChannelClosedEventName
}

// UnpackChannelClosedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChannelClosed(bytes32 indexed channelId, (address,address,address,address,address,uint40,bytes32) config)
func (x402BatchSettlement *X402BatchSettlement) UnpackChannelClosedEvent(log *types.Log) (*X402BatchSettlementChannelClosed, error) {
	event := "ChannelClosed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementChannelClosed)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementChannelCreated represents a ChannelCreated event raised by the X402BatchSettlement contract.
type X402BatchSettlementChannelCreated struct {
	ChannelId [32]byte
	Config    X402BatchSettlementChannelConfig
	Raw       *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementChannelCreatedEventName = "ChannelCreated"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementChannelCreated) ContractEventName() string {
	return X402BatchSettlementChannelCreatedEventName
}

// UnpackChannelCreatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChannelCreated(bytes32 indexed channelId, (address,address,address,address,address,uint40,bytes32) config)
func (x402BatchSettlement *X402BatchSettlement) UnpackChannelCreatedEvent(log *types.Log) (*X402BatchSettlementChannelCreated, error) {
	event := "ChannelCreated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementChannelCreated)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementClaimed represents a Claimed event raised by the X402BatchSettlement contract.
type X402BatchSettlementClaimed struct {
	ChannelId       [32]byte
	Sender          common.Address
	ClaimAmount     *big.Int
	NewTotalClaimed *big.Int
	Raw             *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementClaimedEventName = "Claimed"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementClaimed) ContractEventName() string {
	return X402BatchSettlementClaimedEventName
}

// UnpackClaimedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)
func (x402BatchSettlement *X402BatchSettlement) UnpackClaimedEvent(log *types.Log) (*X402BatchSettlementClaimed, error) {
	event := "Claimed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementClaimed)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementDeposited represents a Deposited event raised by the X402BatchSettlement contract.
type X402BatchSettlementDeposited struct {
	ChannelId  [32]byte
	Sender     common.Address
	Amount     *big.Int
	NewBalance *big.Int
	Raw        *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementDepositedEventName = "Deposited"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementDeposited) ContractEventName() string {
	return X402BatchSettlementDepositedEventName
}

// UnpackDepositedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)
func (x402BatchSettlement *X402BatchSettlement) UnpackDepositedEvent(log *types.Log) (*X402BatchSettlementDeposited, error) {
	event := "Deposited"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementDeposited)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementEIP712DomainChanged represents a EIP712DomainChanged event raised by the X402BatchSettlement contract.
type X402BatchSettlementEIP712DomainChanged struct {
	Raw *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementEIP712DomainChangedEventName = "EIP712DomainChanged"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementEIP712DomainChanged) ContractEventName() string {
	return X402BatchSettlementEIP712DomainChangedEventName
}

// UnpackEIP712DomainChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event EIP712DomainChanged()
func (x402BatchSettlement *X402BatchSettlement) UnpackEIP712DomainChangedEvent(log *types.Log) (*X402BatchSettlementEIP712DomainChanged, error) {
	event := "EIP712DomainChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementEIP712DomainChanged)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementRefunded represents a Refunded event raised by the X402BatchSettlement contract.
type X402BatchSettlementRefunded struct {
	ChannelId [32]byte
	Sender    common.Address
	Amount    *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementRefundedEventName = "Refunded"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementRefunded) ContractEventName() string {
	return X402BatchSettlementRefundedEventName
}

// UnpackRefundedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)
func (x402BatchSettlement *X402BatchSettlement) UnpackRefundedEvent(log *types.Log) (*X402BatchSettlementRefunded, error) {
	event := "Refunded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementRefunded)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementSettled represents a Settled event raised by the X402BatchSettlement contract.
type X402BatchSettlementSettled struct {
	Receiver common.Address
	Token    common.Address
	Sender   common.Address
	Amount   *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementSettledEventName = "Settled"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementSettled) ContractEventName() string {
	return X402BatchSettlementSettledEventName
}

// UnpackSettledEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)
func (x402BatchSettlement *X402BatchSettlement) UnpackSettledEvent(log *types.Log) (*X402BatchSettlementSettled, error) {
	event := "Settled"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementSettled)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementWithdrawFinalized represents a WithdrawFinalized event raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawFinalized struct {
	ChannelId [32]byte
	Sender    common.Address
	Amount    *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementWithdrawFinalizedEventName = "WithdrawFinalized"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementWithdrawFinalized) ContractEventName() string {
	return X402BatchSettlementWithdrawFinalizedEventName
}

// UnpackWithdrawFinalizedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawFinalizedEvent(log *types.Log) (*X402BatchSettlementWithdrawFinalized, error) {
	event := "WithdrawFinalized"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementWithdrawFinalized)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// X402BatchSettlementWithdrawInitiated represents a WithdrawInitiated event raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawInitiated struct {
	ChannelId     [32]byte
	Amount        *big.Int
	FinalizeAfter *big.Int
	Raw           *types.Log // Blockchain specific contextual infos
}

const X402BatchSettlementWithdrawInitiatedEventName = "WithdrawInitiated"

// ContractEventName returns the user-defined event name.
func (X402BatchSettlementWithdrawInitiated) ContractEventName() string {
	return X402BatchSettlementWithdrawInitiatedEventName
}

// UnpackWithdrawInitiatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter)
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawInitiatedEvent(log *types.Log) (*X402BatchSettlementWithdrawInitiated, error) {
	event := "WithdrawInitiated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != x402BatchSettlement.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(X402BatchSettlementWithdrawInitiated)
	if len(log.Data) > 0 {
		if err := x402BatchSettlement.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range x402BatchSettlement.abi.Events[event].Inputs {
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

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (x402BatchSettlement *X402BatchSettlement) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["ClaimExceedsBalance"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackClaimExceedsBalanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["ClaimExceedsCeiling"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackClaimExceedsCeilingError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["DepositCollectionFailed"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackDepositCollectionFailedError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["DepositOverflow"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackDepositOverflowError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["EmptyBatch"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackEmptyBatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["InvalidChannel"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackInvalidChannelError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["InvalidCollector"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackInvalidCollectorError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["InvalidRefundNonce"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackInvalidRefundNonceError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["InvalidSignature"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackInvalidSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["NotAuthorizedToClaim"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackNotAuthorizedToClaimError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["NotAuthorizedToFinalizeWithdraw"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackNotAuthorizedToFinalizeWithdrawError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["NotAuthorizedToRefund"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackNotAuthorizedToRefundError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["NotReceiverAuthorizer"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackNotReceiverAuthorizerError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["NothingToWithdraw"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackNothingToWithdrawError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["ReentrancyGuardReentrantCall"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackReentrancyGuardReentrantCallError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["TokenTransferFailed"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackTokenTransferFailedError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["WithdrawAmountExceedsAvailable"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackWithdrawAmountExceedsAvailableError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["WithdrawDelayNotElapsed"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackWithdrawDelayNotElapsedError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["WithdrawDelayOutOfRange"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackWithdrawDelayOutOfRangeError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["WithdrawalAlreadyPending"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackWithdrawalAlreadyPendingError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["WithdrawalNotPending"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackWithdrawalNotPendingError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["ZeroDeposit"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackZeroDepositError(raw[4:])
	}
	if bytes.Equal(raw[:4], x402BatchSettlement.abi.Errors["ZeroRefund"].ID.Bytes()[:4]) {
		return x402BatchSettlement.UnpackZeroRefundError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// X402BatchSettlementClaimExceedsBalance represents a ClaimExceedsBalance error raised by the X402BatchSettlement contract.
type X402BatchSettlementClaimExceedsBalance struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimExceedsBalance()
func X402BatchSettlementClaimExceedsBalanceErrorID() common.Hash {
	return common.HexToHash("0x7d8242b644ed15fd2ba487e6c0b4cd8132eeaec22a2a10eac4c365a7f6132dce")
}

// UnpackClaimExceedsBalanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimExceedsBalance()
func (x402BatchSettlement *X402BatchSettlement) UnpackClaimExceedsBalanceError(raw []byte) (*X402BatchSettlementClaimExceedsBalance, error) {
	out := new(X402BatchSettlementClaimExceedsBalance)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "ClaimExceedsBalance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementClaimExceedsCeiling represents a ClaimExceedsCeiling error raised by the X402BatchSettlement contract.
type X402BatchSettlementClaimExceedsCeiling struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClaimExceedsCeiling()
func X402BatchSettlementClaimExceedsCeilingErrorID() common.Hash {
	return common.HexToHash("0xf1789775d20e6d801e1dcc76eab01f1cb47cdae0c7ca47c1339d503e1850128f")
}

// UnpackClaimExceedsCeilingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClaimExceedsCeiling()
func (x402BatchSettlement *X402BatchSettlement) UnpackClaimExceedsCeilingError(raw []byte) (*X402BatchSettlementClaimExceedsCeiling, error) {
	out := new(X402BatchSettlementClaimExceedsCeiling)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "ClaimExceedsCeiling", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementDepositCollectionFailed represents a DepositCollectionFailed error raised by the X402BatchSettlement contract.
type X402BatchSettlementDepositCollectionFailed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DepositCollectionFailed()
func X402BatchSettlementDepositCollectionFailedErrorID() common.Hash {
	return common.HexToHash("0xeb43592c973aefddc2c72f3fcc1cd6babb3269a7dda5fedb2a98f5e1934613f1")
}

// UnpackDepositCollectionFailedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DepositCollectionFailed()
func (x402BatchSettlement *X402BatchSettlement) UnpackDepositCollectionFailedError(raw []byte) (*X402BatchSettlementDepositCollectionFailed, error) {
	out := new(X402BatchSettlementDepositCollectionFailed)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "DepositCollectionFailed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementDepositOverflow represents a DepositOverflow error raised by the X402BatchSettlement contract.
type X402BatchSettlementDepositOverflow struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DepositOverflow()
func X402BatchSettlementDepositOverflowErrorID() common.Hash {
	return common.HexToHash("0x1132981b50988e5bf5914c2cdbec86f17b96e379b9fe376f3978c42411aafcd6")
}

// UnpackDepositOverflowError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DepositOverflow()
func (x402BatchSettlement *X402BatchSettlement) UnpackDepositOverflowError(raw []byte) (*X402BatchSettlementDepositOverflow, error) {
	out := new(X402BatchSettlementDepositOverflow)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "DepositOverflow", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementEmptyBatch represents a EmptyBatch error raised by the X402BatchSettlement contract.
type X402BatchSettlementEmptyBatch struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error EmptyBatch()
func X402BatchSettlementEmptyBatchErrorID() common.Hash {
	return common.HexToHash("0xc2e5347df6cf8d1bf68f8a9651642312bd381b900d857d97cd665976180d6ae0")
}

// UnpackEmptyBatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error EmptyBatch()
func (x402BatchSettlement *X402BatchSettlement) UnpackEmptyBatchError(raw []byte) (*X402BatchSettlementEmptyBatch, error) {
	out := new(X402BatchSettlementEmptyBatch)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "EmptyBatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementInvalidChannel represents a InvalidChannel error raised by the X402BatchSettlement contract.
type X402BatchSettlementInvalidChannel struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidChannel()
func X402BatchSettlementInvalidChannelErrorID() common.Hash {
	return common.HexToHash("0xea3a9a39ade8da556b2a0eb84fb492a877b9b1359a1d967769c796bffb21eff6")
}

// UnpackInvalidChannelError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidChannel()
func (x402BatchSettlement *X402BatchSettlement) UnpackInvalidChannelError(raw []byte) (*X402BatchSettlementInvalidChannel, error) {
	out := new(X402BatchSettlementInvalidChannel)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "InvalidChannel", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementInvalidCollector represents a InvalidCollector error raised by the X402BatchSettlement contract.
type X402BatchSettlementInvalidCollector struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidCollector()
func X402BatchSettlementInvalidCollectorErrorID() common.Hash {
	return common.HexToHash("0x18b1afd44def9c8e2335a0b175a19408f7f5ef09683ee05e2f45e8042eb0d72d")
}

// UnpackInvalidCollectorError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidCollector()
func (x402BatchSettlement *X402BatchSettlement) UnpackInvalidCollectorError(raw []byte) (*X402BatchSettlementInvalidCollector, error) {
	out := new(X402BatchSettlementInvalidCollector)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "InvalidCollector", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementInvalidRefundNonce represents a InvalidRefundNonce error raised by the X402BatchSettlement contract.
type X402BatchSettlementInvalidRefundNonce struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidRefundNonce()
func X402BatchSettlementInvalidRefundNonceErrorID() common.Hash {
	return common.HexToHash("0x164f1afe58c9ccb5990cf2f541ddec23cbaf091017a27897e515431a0b4fe8bf")
}

// UnpackInvalidRefundNonceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidRefundNonce()
func (x402BatchSettlement *X402BatchSettlement) UnpackInvalidRefundNonceError(raw []byte) (*X402BatchSettlementInvalidRefundNonce, error) {
	out := new(X402BatchSettlementInvalidRefundNonce)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "InvalidRefundNonce", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementInvalidSignature represents a InvalidSignature error raised by the X402BatchSettlement contract.
type X402BatchSettlementInvalidSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidSignature()
func X402BatchSettlementInvalidSignatureErrorID() common.Hash {
	return common.HexToHash("0x8baa579fce362245063d36f11747a89dd489c54795634fc673cc0e0db51fedc5")
}

// UnpackInvalidSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidSignature()
func (x402BatchSettlement *X402BatchSettlement) UnpackInvalidSignatureError(raw []byte) (*X402BatchSettlementInvalidSignature, error) {
	out := new(X402BatchSettlementInvalidSignature)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "InvalidSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementNotAuthorizedToClaim represents a NotAuthorizedToClaim error raised by the X402BatchSettlement contract.
type X402BatchSettlementNotAuthorizedToClaim struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotAuthorizedToClaim()
func X402BatchSettlementNotAuthorizedToClaimErrorID() common.Hash {
	return common.HexToHash("0xdefb7069aa3adba68f883d732ad2b24c087173487331fccb11d60d1fe7e970a0")
}

// UnpackNotAuthorizedToClaimError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotAuthorizedToClaim()
func (x402BatchSettlement *X402BatchSettlement) UnpackNotAuthorizedToClaimError(raw []byte) (*X402BatchSettlementNotAuthorizedToClaim, error) {
	out := new(X402BatchSettlementNotAuthorizedToClaim)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "NotAuthorizedToClaim", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementNotAuthorizedToFinalizeWithdraw represents a NotAuthorizedToFinalizeWithdraw error raised by the X402BatchSettlement contract.
type X402BatchSettlementNotAuthorizedToFinalizeWithdraw struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotAuthorizedToFinalizeWithdraw()
func X402BatchSettlementNotAuthorizedToFinalizeWithdrawErrorID() common.Hash {
	return common.HexToHash("0x15f969d5c9e170be2291c083d6b150e6fcebf00ef2d8be6550ae6c3dc50dabdb")
}

// UnpackNotAuthorizedToFinalizeWithdrawError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotAuthorizedToFinalizeWithdraw()
func (x402BatchSettlement *X402BatchSettlement) UnpackNotAuthorizedToFinalizeWithdrawError(raw []byte) (*X402BatchSettlementNotAuthorizedToFinalizeWithdraw, error) {
	out := new(X402BatchSettlementNotAuthorizedToFinalizeWithdraw)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "NotAuthorizedToFinalizeWithdraw", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementNotAuthorizedToRefund represents a NotAuthorizedToRefund error raised by the X402BatchSettlement contract.
type X402BatchSettlementNotAuthorizedToRefund struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotAuthorizedToRefund()
func X402BatchSettlementNotAuthorizedToRefundErrorID() common.Hash {
	return common.HexToHash("0x7864f008ee834500b7f2733a6014e3f8eea31d50246cafde51f13a9311acfd40")
}

// UnpackNotAuthorizedToRefundError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotAuthorizedToRefund()
func (x402BatchSettlement *X402BatchSettlement) UnpackNotAuthorizedToRefundError(raw []byte) (*X402BatchSettlementNotAuthorizedToRefund, error) {
	out := new(X402BatchSettlementNotAuthorizedToRefund)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "NotAuthorizedToRefund", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementNotReceiverAuthorizer represents a NotReceiverAuthorizer error raised by the X402BatchSettlement contract.
type X402BatchSettlementNotReceiverAuthorizer struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotReceiverAuthorizer()
func X402BatchSettlementNotReceiverAuthorizerErrorID() common.Hash {
	return common.HexToHash("0xf5e2237d61f9c9a130c1b6459a9c805b19d61228df4da0c80ec97c91b5bc3fb8")
}

// UnpackNotReceiverAuthorizerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotReceiverAuthorizer()
func (x402BatchSettlement *X402BatchSettlement) UnpackNotReceiverAuthorizerError(raw []byte) (*X402BatchSettlementNotReceiverAuthorizer, error) {
	out := new(X402BatchSettlementNotReceiverAuthorizer)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "NotReceiverAuthorizer", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementNothingToWithdraw represents a NothingToWithdraw error raised by the X402BatchSettlement contract.
type X402BatchSettlementNothingToWithdraw struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NothingToWithdraw()
func X402BatchSettlementNothingToWithdrawErrorID() common.Hash {
	return common.HexToHash("0xd0d04f60bf4f7629141a1f00f5d2908fa0f3e15bf4cbf8bb8edc6fcbdf2509fa")
}

// UnpackNothingToWithdrawError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NothingToWithdraw()
func (x402BatchSettlement *X402BatchSettlement) UnpackNothingToWithdrawError(raw []byte) (*X402BatchSettlementNothingToWithdraw, error) {
	out := new(X402BatchSettlementNothingToWithdraw)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "NothingToWithdraw", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementReentrancyGuardReentrantCall represents a ReentrancyGuardReentrantCall error raised by the X402BatchSettlement contract.
type X402BatchSettlementReentrancyGuardReentrantCall struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ReentrancyGuardReentrantCall()
func X402BatchSettlementReentrancyGuardReentrantCallErrorID() common.Hash {
	return common.HexToHash("0x3ee5aeb571de7fc460830b4d0017439a1ca56fb0bc39062227ade4fe4a24c1ca")
}

// UnpackReentrancyGuardReentrantCallError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ReentrancyGuardReentrantCall()
func (x402BatchSettlement *X402BatchSettlement) UnpackReentrancyGuardReentrantCallError(raw []byte) (*X402BatchSettlementReentrancyGuardReentrantCall, error) {
	out := new(X402BatchSettlementReentrancyGuardReentrantCall)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "ReentrancyGuardReentrantCall", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementTokenTransferFailed represents a TokenTransferFailed error raised by the X402BatchSettlement contract.
type X402BatchSettlementTokenTransferFailed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TokenTransferFailed()
func X402BatchSettlementTokenTransferFailedErrorID() common.Hash {
	return common.HexToHash("0x045c4b02bfd1d72e80013ca423cc4ad578d2b3a61cfe3a46410880647bff4f57")
}

// UnpackTokenTransferFailedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TokenTransferFailed()
func (x402BatchSettlement *X402BatchSettlement) UnpackTokenTransferFailedError(raw []byte) (*X402BatchSettlementTokenTransferFailed, error) {
	out := new(X402BatchSettlementTokenTransferFailed)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "TokenTransferFailed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementWithdrawAmountExceedsAvailable represents a WithdrawAmountExceedsAvailable error raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawAmountExceedsAvailable struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawAmountExceedsAvailable()
func X402BatchSettlementWithdrawAmountExceedsAvailableErrorID() common.Hash {
	return common.HexToHash("0x6d3d5764eb95e3a6e5f7fa0be3c1d9073f1cf249735f075c057bad7a3474c94a")
}

// UnpackWithdrawAmountExceedsAvailableError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawAmountExceedsAvailable()
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawAmountExceedsAvailableError(raw []byte) (*X402BatchSettlementWithdrawAmountExceedsAvailable, error) {
	out := new(X402BatchSettlementWithdrawAmountExceedsAvailable)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "WithdrawAmountExceedsAvailable", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementWithdrawDelayNotElapsed represents a WithdrawDelayNotElapsed error raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawDelayNotElapsed struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawDelayNotElapsed()
func X402BatchSettlementWithdrawDelayNotElapsedErrorID() common.Hash {
	return common.HexToHash("0xf3965827abb4b3501eba40fbc36bf95518923256f8e4150f82d6abaf898dfecb")
}

// UnpackWithdrawDelayNotElapsedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawDelayNotElapsed()
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawDelayNotElapsedError(raw []byte) (*X402BatchSettlementWithdrawDelayNotElapsed, error) {
	out := new(X402BatchSettlementWithdrawDelayNotElapsed)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "WithdrawDelayNotElapsed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementWithdrawDelayOutOfRange represents a WithdrawDelayOutOfRange error raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawDelayOutOfRange struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawDelayOutOfRange()
func X402BatchSettlementWithdrawDelayOutOfRangeErrorID() common.Hash {
	return common.HexToHash("0x4574fab68d66a7482499780fe2cf118b6bf35c8ed02b94811df48a01231e8390")
}

// UnpackWithdrawDelayOutOfRangeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawDelayOutOfRange()
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawDelayOutOfRangeError(raw []byte) (*X402BatchSettlementWithdrawDelayOutOfRange, error) {
	out := new(X402BatchSettlementWithdrawDelayOutOfRange)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "WithdrawDelayOutOfRange", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementWithdrawalAlreadyPending represents a WithdrawalAlreadyPending error raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawalAlreadyPending struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawalAlreadyPending()
func X402BatchSettlementWithdrawalAlreadyPendingErrorID() common.Hash {
	return common.HexToHash("0xa2aed0f0fb41b1f15d5794b35460e07faf6ebe60d83540c80e89b1f06eca9396")
}

// UnpackWithdrawalAlreadyPendingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawalAlreadyPending()
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawalAlreadyPendingError(raw []byte) (*X402BatchSettlementWithdrawalAlreadyPending, error) {
	out := new(X402BatchSettlementWithdrawalAlreadyPending)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "WithdrawalAlreadyPending", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementWithdrawalNotPending represents a WithdrawalNotPending error raised by the X402BatchSettlement contract.
type X402BatchSettlementWithdrawalNotPending struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WithdrawalNotPending()
func X402BatchSettlementWithdrawalNotPendingErrorID() common.Hash {
	return common.HexToHash("0x3a0a1ca689ec71617ac2a09f285d91cf55fffc1e4a31ad8aeebcc94abb3a85b3")
}

// UnpackWithdrawalNotPendingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WithdrawalNotPending()
func (x402BatchSettlement *X402BatchSettlement) UnpackWithdrawalNotPendingError(raw []byte) (*X402BatchSettlementWithdrawalNotPending, error) {
	out := new(X402BatchSettlementWithdrawalNotPending)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "WithdrawalNotPending", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementZeroDeposit represents a ZeroDeposit error raised by the X402BatchSettlement contract.
type X402BatchSettlementZeroDeposit struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroDeposit()
func X402BatchSettlementZeroDepositErrorID() common.Hash {
	return common.HexToHash("0x56316e877e9063fd05b03c347d61a4639470c3199f0bdddd28efee0a5f8b6b02")
}

// UnpackZeroDepositError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroDeposit()
func (x402BatchSettlement *X402BatchSettlement) UnpackZeroDepositError(raw []byte) (*X402BatchSettlementZeroDeposit, error) {
	out := new(X402BatchSettlementZeroDeposit)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "ZeroDeposit", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// X402BatchSettlementZeroRefund represents a ZeroRefund error raised by the X402BatchSettlement contract.
type X402BatchSettlementZeroRefund struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroRefund()
func X402BatchSettlementZeroRefundErrorID() common.Hash {
	return common.HexToHash("0xd758525c34181c802038c9e1709640cd49191c6bc9afb13a57391cfe9abab6e8")
}

// UnpackZeroRefundError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroRefund()
func (x402BatchSettlement *X402BatchSettlement) UnpackZeroRefundError(raw []byte) (*X402BatchSettlementZeroRefund, error) {
	out := new(X402BatchSettlementZeroRefund)
	if err := x402BatchSettlement.abi.UnpackIntoInterface(out, "ZeroRefund", raw); err != nil {
		return nil, err
	}
	return out, nil
}
