package saga

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The paper's own configuration parses into its two agents and the graph of Fig. 2:
// order/orderCreation → customer/orderCreation → order/orderApproval.
func TestPaperConfig(t *testing.T) {
	c, err := Parse("paper.saga", []byte(PaperConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Order, ",") != "order,customer" {
		t.Fatalf("agents %v", c.Order)
	}
	g, err := c.Graph(SecKey{"order", "orderCreation"})
	if err != nil {
		t.Fatal(err)
	}
	var secs []string
	for _, k := range g.Sections {
		secs = append(secs, k.String())
	}
	if got := strings.Join(secs, " "); got != "order/orderCreation customer/orderCreation order/orderApproval" {
		t.Fatalf("graph %s", got)
	}
	// customer/orderCreation ends sub-transaction orderCreation (it links a new one);
	// order/orderApproval ends orderApproval.
	if len(g.Ends) != 2 || strings.Join(g.Agents, ",") != "customer,order" {
		t.Fatalf("ends %v agents %v", g.Ends, g.Agents)
	}
	if s := c.Section(SecKey{"customer", "orderCreation"}); s.Incoming != "reserveCredit" || s.Compensation != "cancelReservation" || len(s.Links) != 1 {
		t.Fatalf("customer section %+v", s)
	}
}

// Every kind of bad configuration is one error naming the file and the line.
func TestConfigErrors(t *testing.T) {
	offers := func(agent, action string) bool { return action != "teleport" }
	for _, c := range []struct {
		name, src, want string
	}{
		{"syntax: no period", "//Agente a\nincoming_action(s, x)\n", "cfg:2: syntax error: a fact ends with a period"},
		{"syntax: no parens", "//Agente a\nincoming_action.\n", "cfg:2: syntax error"},
		{"syntax: bad argument", "//Agente a\nincoming_action(s, 3x).\n", `cfg:2: syntax error: argument "3x"`},
		{"unknown fact", "//Agente a\nprevious(s, b).\n", "cfg:2: unknown fact previous"},
		{"wrong arity", "//Agente a\nincoming_action(s).\n", "cfg:2: incoming_action takes 2 arguments, not 1"},
		{"fact before section", "incoming_action(s, x).\n", "cfg:1: a fact before any agent section"},
		{"no section", "% nothing\n", "cfg:1: no agent section"},
		{"unknown agent", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, zed).\n", "cfg:4: unknown agent zed"},
		{"missing compensation", "//Agente a\nincoming_action(s, x).\n", "cfg:2: missing compensation: incoming_action(s, x) at agent a has no compensation_action"},
		{"no incoming", "//Agente a\ncompensation_action(s, y).\n", "cfg:2: sub-transaction s at agent a has no incoming_action"},
		{"cycle without new name", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, b).\n//Agente b\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, a).\n",
			"visits agent a twice: a cycle must go through a new sub-transaction name"},
		{"linked loop", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, t, a).\nincoming_action(t, x).\ncompensation_action(t, y).\nnext(t, s, a).\n", "sections loop back"},
		{"action nobody offers", "//Agente a\nincoming_action(s, teleport).\ncompensation_action(s, y).\n", "cfg:2: action teleport: no service at agent a offers it"},
		{"section missing at target", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, b).\n//Agente b\nincoming_action(t, x).\ncompensation_action(t, y).\n", "cfg:4: agent b has no section for sub-transaction s"},
		{"duplicate agent", "//Agente a\n//Agente a\n", "cfg:2: agent a has a second section"},
		{"second next/2", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, b).\nnext(s, c).\n", "cfg:5: a second next/2"},
		// issue 34: binary input, a byte-order mark, a header read as a comment, two
		// facts on one line
		{"binary", "//Agente a\nincoming_action(s, x).\n\x00\x01\xff\xfe", "cfg:3: control or invisible character U+0000"},
		{"invalid UTF-8", "//Agente a\nincoming_action(s, \xff).\n", "cfg:2: byte 0xff is not UTF-8"},
		{"byte-order mark", "\uFEFF//Agente a\nincoming_action(s, x).\n", "cfg:1: the file starts with a UTF-8 byte-order mark"},
		{"invisible character", "//Agente a\nincoming_action(s,\u200b x).\n", "cfg:2: control or invisible character U+200B"},
		{"header with two words", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\n// agent 1 car\nincoming_action(t, x).\n", `cfg:4: a section header names one agent, // agent NAME: got "// agent 1 car"`},
		{"two facts on one line", "//Agente a\nincoming_action(s, x). compensation_action(s, y).\n", `cfg:2: one fact a line: "incoming_action(s, x)." is followed by "compensation_action(s, y)."`},
		{"long line quoted and cut", "//Agente a\n" + strings.Repeat("x", 500) + "\n", `cfg:2: syntax error: a fact ends with a period: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"…`},
		{"a link twice", "//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, t, b).\nnext(s, t, b).\n", "cfg:5: next(s, t, b) a second time at agent a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("cfg", []byte(c.src), offers)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want %q", err, c.want)
			}
		})
	}
}

// Issue 34: a configuration small on disk but huge in effect is refused as it is read,
// before anything is built, in a few megabytes at most: 2 000 agents in a chain, one
// section linking many others, more sections than MaxSections.
func TestConfigBounds(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "// agent a%d\nincoming_action(main, do).\ncompensation_action(main, undo).\n", i)
			if i < n {
				fmt.Fprintf(&b, "next(main, a%d).\n", i+1)
			}
		}
		return b.String()
	}
	fan := "// agent a\nincoming_action(s, do).\ncompensation_action(s, undo).\n"
	for i := range MaxLinks + 1 {
		fan += fmt.Sprintf("next(s, t%d, b).\n", i)
	}
	many := "// agent a\n"
	for i := range MaxSections + 1 {
		many += fmt.Sprintf("incoming_action(s%d, do).\ncompensation_action(s%d, undo).\n", i, i)
	}
	for _, c := range []struct{ name, src, want string }{
		{"a 2 000-agent chain", chain(2000), fmt.Sprintf("cfg:%d: more than 200 agents", 200*4+1)},
		{"fan-out", fan, fmt.Sprintf("cfg:%d: sub-transaction s at agent a starts more than %d others", MaxLinks+4, MaxLinks)},
		{"sections", many, fmt.Sprintf("cfg:%d: more than %d sections", 2*MaxSections+2, MaxSections)},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("cfg", []byte(c.src), nil)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%s: refusing it allocated %d MiB", c.name, alloc>>20)
		}
	}
	// the largest chain allowed parses and has its graph
	c, err := Parse("cfg", []byte(chain(MaxAgents)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := c.Graph(SecKey{"a1", "main"}); err != nil || len(g.Sections) != MaxAgents {
		t.Fatalf("chain of %d: %v", MaxAgents, err)
	}
}

// Comments, blank lines, CRLF and the "// agent NAME" header are accepted.
func TestConfigLenient(t *testing.T) {
	src := "% a comment\r\n// agent a\r\nincoming_action(s, x). // trailing\r\n\r\ncompensation_action( s , y ).\r\n"
	c, err := Parse("cfg", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Section(SecKey{"a", "s"}); s == nil || s.Incoming != "x" || s.Compensation != "y" {
		t.Fatalf("section %+v", s)
	}
}

// FuzzParse: any input gives a configuration or one error line naming the file; a
// configuration that parses has a graph from every section.
func FuzzParse(f *testing.F) {
	f.Add(PaperConfig)
	f.Add("//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, t, a).\nincoming_action(t, x).\ncompensation_action(t, y).\n")
	f.Add("//Agente a\nnext(s,b).")
	f.Add("\uFEFF//Agente a\n\x00\xff")
	f.Add("// agent 1 car\nincoming_action(s, x). compensation_action(s, y).\n")
	f.Add("//Agente a\nincoming_action(s, x).\ncompensation_action(s, y).\nnext(s, t, a).\nnext(s, t, a).\n")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Parse("f.saga", []byte(src), nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.saga:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		for _, a := range c.Order {
			for _, st := range sortedKeys(c.Agents[a].Sections) {
				if _, err := c.Graph(SecKey{a, st}); err != nil {
					t.Fatalf("parsed, but no graph from %s/%s: %v", a, st, err)
				}
			}
		}
	})
}
