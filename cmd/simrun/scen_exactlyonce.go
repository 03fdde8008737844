package main

import _ "simrun/scenarios/exactlyonce" // registers the exactlyonce/* scenarios and model
