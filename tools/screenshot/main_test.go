package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/simrun-dev/simrun/internal/browsertest"
)

// The documented screenshot command works: it draws the explorer's page of a model into
// a PNG that is not blank.
func TestScreenshot(t *testing.T) {
	browsertest.Chromium(t)
	out := filepath.Join(t.TempDir(), "x.png")
	if err := run([]string{"-o", out, "-size", "800,600", "2pc", "#path=0.0.1"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colors := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if len(colors) < 20 {
		t.Fatalf("the screenshot has %d colours: blank?", len(colors))
	}
	if err := run([]string{"-o", out, "2pc", "step=1"}); err == nil {
		t.Fatal("a fragment without # was accepted")
	}
}
