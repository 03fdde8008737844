package cli

import (
	"runtime"
	"runtime/debug"
)

// Version is the version of this source tree. It is stamped here, not taken from the
// build alone, so that every binary names one: a build without VCS information
// (-buildvcs=false, a source archive, a vendored copy) used to print "(devel)".
// Raise it when a release is tagged; between releases it carries "-dev".
const Version = "v0.1.0-dev"

// version describes the binary: Version; the module version when the binary was
// installed as a module at another version (go install …@v1.2.3 or a pseudo-version);
// the commit, when the build recorded it ("+dirty" for uncommitted changes); and the Go
// release. Trace headers do not depend on it.
func version() string {
	return describeBuild(debug.ReadBuildInfo())
}

func describeBuild(bi *debug.BuildInfo, ok bool) string {
	out := "simrun " + Version
	rev, dirty := "", false
	if ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" && v != Version {
			out += " (module " + v + ")"
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev != "" {
		out += " " + rev[:min(12, len(rev))]
		if dirty {
			out += "+dirty"
		}
	}
	return out + " " + runtime.Version()
}
