package scenarios

// GCPercentFor exposes gcPercentFor to the external tests.
var GCPercentFor = gcPercentFor
