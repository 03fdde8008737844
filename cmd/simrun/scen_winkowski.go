package main

import _ "github.com/simrun-dev/simrun/scenarios/winkowski" // registers the winkowski/… scenarios
