#!/usr/bin/env bash
set -euo pipefail
# Files the package cannot ship as data (hidden, spaces, no packaged suffix).
mkdir -p "$(dirname 'src/stats.h')"
cat > 'src/stats.h' <<'AGENTPOST_EOF'
double mean(const double *xs, int n);
double stddev(const double *xs, int n);
AGENTPOST_EOF
mkdir -p "$(dirname 'src/Makefile')"
cat > 'src/Makefile' <<'AGENTPOST_EOF'
CC = gcc
CFLAGS = -O2 -Wall

stats_tool: main.o
	$(CC) $(CFLAGS) -o $@ main.o

%.o: %.c stats.h
	$(CC) $(CFLAGS) -c $<

clean:
	rm -f *.o stats_tool
AGENTPOST_EOF
