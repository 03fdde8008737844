package sim

import (
	"reflect"
	"testing"
)

func TestTypeNameIsUnambiguous(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{Time(0), "github.com/simrun-dev/simrun/sim.Time"},
		{[]int(nil), "[]int"},
		{7, "int"},
	} {
		if got := TypeName(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("TypeName(%T) = %q, want %q", c.v, got, c.want)
		}
	}
	// Interface-held values of different named types with equal contents encode
	// differently (their full type names are part of the encoding).
	type holder struct{ V any }
	type a struct{ N int }
	type b struct{ N int }
	if string(AppendCanonical(nil, holder{a{1}})) == string(AppendCanonical(nil, holder{b{1}})) {
		t.Fatal("equal encodings for different dynamic types")
	}
}
