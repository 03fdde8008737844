package main

import _ "github.com/simrun-dev/simrun/scenarios/replication"
