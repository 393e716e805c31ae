#!/usr/bin/env bash
# A plausible WRONG solution: loops while i < n, so N itself is never printed even when it is prime.
set -uo pipefail
cd /app
cat > primes.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: primes N\n");
        return 1;
    }
    char *end;
    long n = strtol(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0') {
        fprintf(stderr, "primes: not an integer: %s\n", argv[1]);
        return 1;
    }
    for (long i = 2; i < n; i++) {
        int prime = 1;
        for (long j = 2; j * j <= i; j++) {
            if (i % j == 0) { prime = 0; break; }
        }
        if (prime) printf("%ld\n", i);
    }
    return 0;
}
EOF
gcc -O2 -o primes primes.c
