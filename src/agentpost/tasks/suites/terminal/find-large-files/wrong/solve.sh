#!/usr/bin/env bash
# A plausible WRONG solution: uses find -size +2k, which rounds sizes up to KiB and misses files of 2001-2048 bytes.
set -uo pipefail
cd /app
cd data && find . -type f -size +2k | sed 's|^\./||' | LC_ALL=C sort > ../large_files.txt
