// Package explore is simrun's interactive explorer (simrun explore): a local web
// server and a self-contained page over simulator traces, model-checker
// counterexamples and model state spaces alike.
//
//   - A trace (simrun run --trace, simrun check --trace) is re-executed from its
//     header: a simulator trace by the simulator (scenarios.Start: the same seed,
//     parameters and fault plan), a model-checker trace on its model (the successor
//     whose record matches each line). Step k is the state after the k-th event;
//     states are rebuilt by deterministic re-execution (a kernel stepped forward,
//     rebuilt from the start to go back), never stored in the trace. If this binary's
//     re-execution departs from the file, the page says where.
//   - A model (simrun explore MODEL -p …) is browsed from its initial states: a path
//     (the initial state's index, then the successor index taken at each step:
//     "0.3.1") names a state, so a URL "#path=0.3.1" is bookmarkable. The page lists
//     the enabled actions (each a link), every property's value in this state, the
//     path so far as a space-time diagram, and runs the model check on demand, linking
//     each counterexample and sometimes-witness it finds.
//   - A model-checker trace gives both: its steps, and the state space around its path.
//
// # JSON API
//
// Every answer is one JSON object; an error is {"error": "..."} with a 4xx status for
// bad requests (404 for an unknown endpoint or a path that leaves the state space, 400
// for a malformed parameter, 405 for a wrong method, 414 for a query over MaxQuery
// bytes) and 500 for a failure of the system's own code. Nothing the server reads
// names a file: the trace is given on the command line.
//
//	GET  /api/info                    {"trace": {...}, "model": {...}} (whichever exist):
//	                                  trace: file, engine, name, seed, params, steps,
//	                                  nodes, kinds, verdicts, first_violation (-1: none),
//	                                  first_violation_why, warning, model_path;
//	                                  model: name, params, properties [{name, kind}], inits
//	GET  /api/records?from=I&count=N  records I..I+N-1 (N <= MaxRecords, default 200),
//	                                  each a trace record plus "step" and "sent_by" (the
//	                                  index of the record that sent what it receives, -1)
//	GET  /api/step?k=K                the state after step K (0 <= K <= steps): "state"
//	                                  (sim.Snapshot), "lines" (its leaves as path/value),
//	                                  "diff" against step K-1 [{path, was, now}],
//	                                  "changed_nodes", "records" of step K, "index" of
//	                                  its first record
//	GET  /api/find?from=K&dir=next|prev&node=N&kind=M
//	                                  the next (previous) step after (before) K involving
//	                                  node N and message kind M (either may be empty):
//	                                  {"step": S}, -1 when none
//	GET  /api/overview?width=W        the whole run in W buckets of steps (10..4000,
//	                                  default 600): per node its events per bucket
//	                                  ("counts") and the buckets where it crashed
//	GET  /api/state?path=P            the state path P leads to (model.View: depth, inits,
//	                                  fingerprint, state, expandable, actions [{index,
//	                                  name, path, fingerprint, self}], properties [{name,
//	                                  kind, holds}], records, record_step) plus sent_by, lines, diff
//	                                  against the parent state, changed_nodes
//	POST /api/check                   starts the model check (once; BFS, weak fairness for
//	                                  actor systems as simrun check) and returns its status
//	GET  /api/check                   {"status": idle|running|done|error, "stats",
//	                                  "outcome", "bound", "properties": [{name, kind,
//	                                  status, path, depth, cycle, why}]}
//
// The server listens on 127.0.0.1 unless told otherwise (the command line warns about
// any other address); it serves only the embedded page and this API.
//
// Files: timeline.go (loading and re-executing traces, the first violating step),
// diff.go (snapshot leaves and diffs), server.go (the API), assets/ (the page).
package explore
