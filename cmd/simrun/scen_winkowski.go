package main

import _ "simrun/scenarios/winkowski" // registers the winkowski/… scenarios
