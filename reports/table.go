// Package reports renders run metrics: tables (aligned text and CSV) and, for
// experiments, plots.
package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Table is a titled table of strings. Rows must have as many cells as Columns.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Notes are printed under the text rendering (not in the CSV).
	Notes []string
	// Figures are drawn from the table's columns when an experiment writes its
	// directory (--out): one figure per claim (see Figure).
	Figures []Figure `json:"figures,omitempty"`
	// Claims, when set, makes the table its experiment's claims table (ClaimsTable).
	Claims []Claim `json:"claims,omitempty"`
}

// NewTable returns an empty table with the given columns.
func NewTable(title string, columns ...string) *Table {
	return &Table{Title: title, Columns: columns}
}

// Add appends a row; each cell is formatted with %v (floats with %.4g). A cell that is
// a []string or a []any spreads over as many columns (an estimate and its interval's
// ends, say).
func (t *Table) Add(cells ...any) {
	if slices.ContainsFunc(cells, func(c any) bool {
		switch c.(type) {
		case []string, []any:
			return true
		}
		return false
	}) {
		var flat []any
		for _, c := range cells {
			switch v := c.(type) {
			case []string:
				for _, s := range v {
					flat = append(flat, s)
				}
			case []any:
				flat = append(flat, v...)
			default:
				flat = append(flat, c)
			}
		}
		cells = flat
	}
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("reports: row of %d cells for %d columns", len(cells), len(t.Columns)))
	}
	row := make([]string, len(cells))
	for i, c := range cells {
		switch v := c.(type) {
		case float64:
			row[i] = fmt.Sprintf("%.4g", v)
		case float32:
			row[i] = fmt.Sprintf("%.4g", v)
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.Rows = append(t.Rows, row)
}

// WriteText writes the table with aligned columns.
func (t *Table) WriteText(w io.Writer) error {
	width := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		width[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := width[i] - utf8.RuneCountInString(c)
			if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + strings.Repeat(" ", pad))
			}
		}
		b.WriteString("\n")
	}
	line(t.Columns)
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String returns the text rendering.
func (t *Table) String() string {
	var b strings.Builder
	_ = t.WriteText(&b)
	return b.String()
}

// WriteCSV writes the header and rows as CSV.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// SaveCSV writes the table to dir/name (creating dir) and returns the path.
func (t *Table) SaveCSV(dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	if err := t.WriteCSV(f); err != nil {
		f.Close()
		return "", fmt.Errorf("reports: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("reports: %s: %w", path, err)
	}
	return path, nil
}
