#!/usr/bin/env bash
# A plausible WRONG solution: counts case-sensitively, so 'The' and 'the' are different words.
set -uo pipefail
cd /app
tr -cs 'A-Za-z' '\n' < text.txt | grep . | sort | uniq -c \
  | sort -k1,1nr -k2,2 | head -10 | awk '{print $2, $1}' > top10.txt
