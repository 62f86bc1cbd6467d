// The official signer of settle/batch's interop test: @x402/evm's batch-settlement client builds
// the channel config from a 402 requirement, derives the channel id, signs a deposit payload
// (ERC-3009 ReceiveWithAuthorization to the collector plus the first voucher) and a voucher per
// cumulative amount, with a viem account. Prints them as JSON for the Go side to verify.
//
// usage: node batch-sign.mjs PRIVATE_KEY_HEX NETWORK ASSET PAY_TO RECEIVER_AUTHORIZER WITHDRAW_DELAY DEPOSIT CUMULATIVE...
import {
  buildChannelConfig,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import { privateKeyToAccount } from "viem/accounts";

const [key, network, asset, payTo, receiverAuthorizer, delay, deposit, ...cumulative] = process.argv.slice(2);
const account = privateKeyToAccount(key.startsWith("0x") ? key : `0x${key}`);
const requirements = {
  scheme: "batch-settlement",
  network,
  amount: cumulative[0],
  asset,
  payTo,
  maxTimeoutSeconds: 3600,
  extra: { receiverAuthorizer, withdrawDelay: Number(delay), name: "USD Coin", version: "2" },
};
const salt = "0x00000000000000000000000000000000000000000000000000000000000000a7";
const channelConfig = buildChannelConfig({ signer: account, salt }, requirements);
const channelId = computeChannelId(channelConfig, network);
const depositPayload = await createBatchSettlementEIP3009DepositPayload(
  account, 2, requirements, channelConfig, deposit, cumulative[0],
);
const vouchers = [];
for (const c of cumulative) {
  vouchers.push(await signVoucher(account, channelId, c, network));
}
console.log(JSON.stringify({ channelConfig, channelId, deposit: depositPayload.payload, vouchers }));
