package reports

import "fmt"

// Verdict says whether a paper's claim holds in simrun's measurement.
type Verdict string

// The verdicts of a claim: it holds, it does not, or the paper states it without a
// number to compare with (simrun's number is then reported, not judged).
const (
	Holds       Verdict = "holds"
	DoesNotHold Verdict = "does not hold"
	NoNumber    Verdict = "paper gives no number"
)

// Claim is one claim of a paper that an experiment measures: where the paper makes
// it, what it says, what simrun measured, and the verdict. The measured text and the
// verdict come from the experiment's numbers (never written by hand), so a page can
// not claim what its data do not show.
type Claim struct {
	Source   string  `json:"source"`   // "Zhu 2002 §5.4.1"
	Paper    string  `json:"paper"`    // what the paper says
	Measured string  `json:"measured"` // what simrun measured
	Verdict  Verdict `json:"verdict"`
}

// ClaimsTitle is the title of an experiment's claims table.
const ClaimsTitle = "Paper claims"

// ClaimsTable is the table of an experiment's claims: the page shows it first, the
// experiments index collects it.
func ClaimsTable(claims ...Claim) *Table {
	t := NewTable(ClaimsTitle, "source", "paper", "simrun", "verdict")
	for _, c := range claims {
		t.Add(c.Source, c.Paper, c.Measured, string(c.Verdict))
	}
	t.Claims = claims
	return t
}

// Judge returns Holds when ok, DoesNotHold otherwise.
func Judge(ok bool) Verdict {
	if ok {
		return Holds
	}
	return DoesNotHold
}

// Pct formats a share as a percentage ("12.5 %").
func Pct(share float64) string { return fmt.Sprintf("%.1f %%", 100*share) }
