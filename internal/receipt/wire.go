package receipt

// Wire shapes of the offer-and-receipt extension, as @x402/extensions 2.27 reads and writes them.

// Extension is the extension's key in a 402's and a payment response's extensions.
const Extension = "offer-receipt"

// Formats of signed offers and receipts.
const (
	FormatEIP712 = "eip712"
	FormatJWS    = "jws"
)

// Version is the extension payload version.
const Version = 1

// OfferPayload is what an offer signs: one accepts entry of a 402, valid until a time.
type OfferPayload struct {
	Version     int    `json:"version"`
	ResourceURL string `json:"resourceUrl"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
	Asset       string `json:"asset"`
	PayTo       string `json:"payTo"`
	Amount      string `json:"amount"`
	ValidUntil  int64  `json:"validUntil"`
}

// SignedOffer is one entry of extensions["offer-receipt"].info.offers: EIP-712 carries the
// payload beside its signature, JWS inside it.
type SignedOffer struct {
	Format      string        `json:"format"`
	AcceptIndex int           `json:"acceptIndex"`
	Payload     *OfferPayload `json:"payload,omitempty"`
	Signature   string        `json:"signature"`
}

// ReceiptPayload is what a receipt signs. Transaction is "" for a payment not settled yet
// (the JWS form then leaves it out, as the reference does).
type ReceiptPayload struct {
	Version     int    `json:"version"`
	Network     string `json:"network"`
	ResourceURL string `json:"resourceUrl"`
	Payer       string `json:"payer"`
	IssuedAt    int64  `json:"issuedAt"`
	Transaction string `json:"transaction"`
}

// SignedReceipt is extensions["offer-receipt"].info.receipt of a payment response.
type SignedReceipt struct {
	Format    string          `json:"format"`
	Payload   *ReceiptPayload `json:"payload,omitempty"`
	Signature string          `json:"signature"`
}

// DeliveryExtension is the key of the box's delivery statement in a payment response's
// extensions (docs/receipts.md): {"info":{"statement":"<JWS>"}}.
const DeliveryExtension = "peage-delivery"

// Settlement states a delivery statement names.
const (
	Settled = "settled"
	Pending = "pending" // delivered against a durably owed payment, settled after the answer
)

// Statement is the delivery statement's payload: the receipt it accompanies, the request it
// answered and the body delivered, signed by the same key as the receipt.
type Statement struct {
	Version int `json:"version"`
	// Receipt is the SHA-256 (hex) of the accompanying receipt's signature string.
	Receipt     string `json:"receipt"`
	ResourceURL string `json:"resourceUrl"`
	Network     string `json:"network"`
	Scheme      string `json:"scheme"`
	Amount      string `json:"amount"` // atomic units paid for this call
	Payer       string `json:"payer"`
	// Nonce is the payment's nonce (exact: the authorization's; batch-settlement: the
	// voucher's channel and cumulative amount), by which /free/receipt finds it again.
	Nonce string `json:"nonce"`
	// Settlement is Settled (Transaction names it) or Pending.
	Settlement  string            `json:"settlement"`
	Transaction string            `json:"transaction,omitempty"`
	IssuedAt    int64             `json:"issuedAt"`
	Request     StatementRequest  `json:"request"`
	Response    StatementResponse `json:"response"`
	Subject     *Subject          `json:"subject,omitempty"`
}

// StatementRequest is the request answered: its method, path and the SHA-256 of its
// parameters' canonical encoding (the route, '?', then name=value in catalog order).
type StatementRequest struct {
	Method       string `json:"method"`
	Path         string `json:"path"`
	ParamsSHA256 string `json:"paramsSha256"`
}

// StatementResponse is the body as delivered (before any transfer encoding).
type StatementResponse struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Length      int    `json:"length"`
	SHA256      string `json:"sha256"`
}

// Subject is what a result with a lasting side effect handed out: a proxy package (the
// SHA-256 of its key and its terms), an inbox or a page (its id).
type Subject struct {
	Kind      string `json:"kind"`
	ID        string `json:"id,omitempty"`
	KeySHA256 string `json:"keySha256,omitempty"`
	Terms     string `json:"terms,omitempty"`
}
