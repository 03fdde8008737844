package main

import _ "github.com/simrun-dev/simrun/scenarios/exactlyonce" // registers the exactlyonce/* scenarios and model
