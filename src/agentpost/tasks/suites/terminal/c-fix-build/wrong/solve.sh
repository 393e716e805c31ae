#!/usr/bin/env bash
# A plausible WRONG solution: adds stats.o to the link but forgets -lm, so sqrt stays unresolved.
set -uo pipefail
cd /app
cd src
sed -i 's/^stats_tool: main.o$/stats_tool: main.o stats.o/; s/-o $@ main.o$/-o $@ main.o stats.o/' Makefile
make
