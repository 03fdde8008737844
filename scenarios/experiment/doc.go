// Package experiment is simrun's experiment framework: an experiment declares its
// sweep (a grid of points, the runs of each and their seeds), what one run measures,
// and its tables and figures; the framework runs the sweep in parallel
// (deterministically: results never depend on the workers), aggregates with
// confidence intervals, and writes the CSV, figures and page.
package experiment
