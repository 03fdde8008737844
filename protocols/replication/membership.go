package replication

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The thesis' own membership (Options.BackupsRegister, NoBackupPing), beside simrun's
// polling: §5.2.2's ping thread ends "register impl with the new primary", so the
// primary learns its backups from them rather than by looking the group up every
// period; and §7's future work replaces the backups' pinging by the registries'
// remote events ("backup replicas will be notified when the primary fails, which
// eliminates the need for backups to inquire frequently the status of the
// primary"). The replication/notify experiment measures both against simrun's
// polling. A backup that crashes stays in the primary's list until verify_primary's
// lookup (every 5 periods) after its registration expired: the thesis' primary
// learnt it from the failed update call, which a simulated link cannot report.

// pinged: a backup's ping registers it with the primary (BackupsRegister).
func (r *Replica) pinged(from sim.NodeID) {
	if !r.O.BackupsRegister || !r.S.Primary || slices.Contains(r.S.Backups, from) {
		return
	}
	r.S.Backups = append(r.S.Backups, from)
	slices.Sort(r.S.Backups)
}

// noPing reports whether a backup does without pinging its primary (NoBackupPing
// with notifications on).
func (r *Replica) noPing() bool { return r.O.NoBackupPing && r.O.Notify }

// verifyOnly is a backup's tick without pings: verify_primary every 5 periods.
func (r *Replica) verifyOnly() {
	if r.S.Counter >= 5 {
		r.S.Counter = 0
		r.lookup("verify")
	}
}

// noticed reads a membership notice without pings: when it lists no primary, the
// primary followed has failed (its registration expired), and the notice is handled
// as the ping's exception would be (handle_primary_failure, §5.2.3).
func (r *Replica) noticed(regs []Reg) {
	if !r.noPing() || r.S.Primary || r.S.Claiming || slices.ContainsFunc(regs, func(g Reg) bool { return g.Primary }) {
		return
	}
	r.S.PrimaryNode = -1
	r.S.Purpose = "failure"
}
