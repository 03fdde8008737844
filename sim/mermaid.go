package sim

import (
	"fmt"
	"io"
	"strings"
)

// WriteMermaid renders trace records as a Mermaid sequence diagram: deliveries as
// arrows, losses as crossed arrows, timers, crashes and faults as notes. At most limit
// records are drawn (0 = all); a final note says how many were left out.
func WriteMermaid(w io.Writer, names []string, recs []TraceRecord, limit int) error {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    participant %s\n", mermaidID(n))
	}
	all := names
	span := ""
	if len(all) > 0 {
		span = mermaidID(all[0])
		if len(all) > 1 {
			span += "," + mermaidID(all[len(all)-1])
		}
	}
	shown := recs
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, r := range shown {
		at := Time(r.T).String()
		node := mermaidID(r.Node)
		switch r.Ev {
		case "recv":
			tag := ""
			if r.Why == "duplicate" {
				tag = " (dup)"
			}
			fmt.Fprintf(&b, "    %s->>%s: %s%s @%s\n", mermaidID(r.From), node, mermaidText(r.Kind), tag, at)
		case "lost":
			if r.From == "env" {
				fmt.Fprintf(&b, "    Note over %s: lost %s (%s) @%s\n", node, mermaidText(r.Kind), r.Why, at)
			} else {
				fmt.Fprintf(&b, "    %s-x%s: %s lost (%s) @%s\n", mermaidID(r.From), node, mermaidText(r.Kind), r.Why, at)
			}
		case "inject":
			fmt.Fprintf(&b, "    Note over %s: input %s @%s\n", node, mermaidText(r.Kind), at)
		case "timer":
			fmt.Fprintf(&b, "    Note over %s: timer %s @%s\n", node, mermaidText(r.Timer), at)
		case "start":
			continue
		case "restart", "crash", "skew", "panic":
			fmt.Fprintf(&b, "    Note over %s: %s %s @%s\n", node, strings.ToUpper(r.Ev), mermaidText(r.Why), at)
		default: // partition, cut, heal, spike, burst
			if span != "" {
				fmt.Fprintf(&b, "    Note over %s: %s %s @%s\n", span, strings.ToUpper(r.Ev), mermaidText(r.Why), at)
			}
		}
		for _, e := range r.Out {
			if e.Op == "send" && e.Lost != "" {
				fmt.Fprintf(&b, "    %s-x%s: %s lost (%s) @%s\n", node, mermaidID(e.To), mermaidText(e.Kind), e.Lost, at)
			}
		}
	}
	if len(shown) < len(recs) {
		fmt.Fprintf(&b, "    Note over %s: … %d more events not shown\n", span, len(recs)-len(shown))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidID makes a node name safe as a Mermaid participant id.
func mermaidID(s string) string {
	if s == "" {
		return "env"
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// mermaidText removes characters that end a Mermaid message.
func mermaidText(s string) string {
	return strings.NewReplacer(";", ",", "\n", " ", "#", "").Replace(s)
}
