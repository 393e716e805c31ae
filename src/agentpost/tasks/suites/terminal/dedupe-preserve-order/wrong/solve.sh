#!/usr/bin/env bash
# A plausible WRONG solution: uses sort -u, which removes repeats but loses the original order.
set -uo pipefail
cd /app
sort -u emails.txt > unique.txt
