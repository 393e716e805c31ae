#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cd src
cat > Makefile <<'EOF'
CC = gcc
CFLAGS = -O2 -Wall

stats_tool: main.o stats.o
	$(CC) $(CFLAGS) -o $@ main.o stats.o -lm

%.o: %.c stats.h
	$(CC) $(CFLAGS) -c $<

clean:
	rm -f *.o stats_tool
EOF
make
