package main

import _ "simrun/scenarios/leasing"
