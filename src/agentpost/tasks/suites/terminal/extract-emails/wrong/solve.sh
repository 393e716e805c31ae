#!/usr/bin/env bash
# A plausible WRONG solution: a too-narrow regex: no '+' or '-' in the local part and only one domain label before the TLD.
set -uo pipefail
cd /app
grep -oE "[A-Za-z0-9._]+@[A-Za-z0-9]+\.[A-Za-z]{2,}" messages.txt | tr 'A-Z' 'a-z' | LC_ALL=C sort -u > emails.txt
