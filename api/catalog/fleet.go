package catalog

// HeaderBox names, on an answer a fleet's gateway relayed, the box that served it; the gate
// hands it to the ledger with the call's settlement, so revenue is counted per box.
const HeaderBox = "X-Peage-Box"
