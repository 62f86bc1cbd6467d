// The offer-and-receipt interop test's independent side: @x402/extensions 2.27's reference code
// extracts and verifies a 402's signed offers (EIP-712 by recovering the signer, JWS through the
// box's did:web document), then the reference @x402/fetch client pays once per format and the
// reference code extracts each receipt from the answer, verifies it and matches it to its offer.
// Prints JSON for the Go test to check.
//
// usage: node offer-receipt.mjs URL PRIVATE_KEY_HEX ASSET MAX_ATOMIC
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import {
  extractOffersFromPaymentRequired, extractOfferPayload, findAcceptsObjectFromSignedOffer,
  verifyOfferSignatureEIP712, verifyOfferSignatureJWS,
  extractReceiptFromResponse, verifyReceiptSignatureEIP712, verifyReceiptSignatureJWS,
  verifyReceiptMatchesOffer,
} from "@x402/extensions/offer-receipt";

const [url, key, asset, max] = process.argv.slice(2);
const account = privateKeyToAccount(key.startsWith("0x") ? key : `0x${key}`);
const FORMAT = "X-Offer-Receipt-Format";

const challenge = await fetch(url, { headers: { [FORMAT]: "both" } });
const required = decodePaymentRequiredHeader(challenge.headers.get("PAYMENT-REQUIRED"));
const offers = [];
for (const offer of extractOffersFromPaymentRequired(required)) {
  const out = { format: offer.format, acceptIndex: offer.acceptIndex };
  if (offer.format === "eip712") {
    const { signer, payload } = await verifyOfferSignatureEIP712(offer);
    Object.assign(out, { signer, payload });
  } else {
    out.payload = await verifyOfferSignatureJWS(offer); // the key from the kid's did:web
  }
  out.matchesAccept = findAcceptsObjectFromSignedOffer(offer, required.accepts) !== undefined;
  offers.push(out);
}

const client = new x402Client()
  .register("eip155:*", new ExactEvmScheme(account))
  .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset, maxAmountPerPayment: max }] });
const fetchWithPayment = wrapFetchWithPayment(fetch, client);
const receipts = [];
for (const format of ["eip712", "jws"]) {
  const res = await fetchWithPayment(`${url}-${format}`, { headers: { [FORMAT]: format } });
  const body = await res.text();
  const receipt = extractReceiptFromResponse(res);
  const out = { format, status: res.status, body, contentType: res.headers.get("Content-Type"),
    paymentResponse: res.headers.get("PAYMENT-RESPONSE"), found: receipt !== undefined };
  if (receipt) {
    if (receipt.format === "eip712") {
      const { signer, payload } = await verifyReceiptSignatureEIP712(receipt);
      Object.assign(out, { signer, payload });
    } else {
      out.payload = await verifyReceiptSignatureJWS(receipt);
    }
    out.receiptFormat = receipt.format;
    const offer = offers.find((o) => o.format === format && o.acceptIndex === 0);
    out.matchesOffer = verifyReceiptMatchesOffer(receipt, offer.payload, [account.address]);
  }
  receipts.push(out);
}
console.log(JSON.stringify({ offers, receipts }));
