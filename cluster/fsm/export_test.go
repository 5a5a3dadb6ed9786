package fsm

// ApplyCatalogSynced lets the external tests call one apply function on a
// hand-built state.
var ApplyCatalogSynced = applyCatalogSynced
