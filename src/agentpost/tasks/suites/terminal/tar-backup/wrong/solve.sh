#!/usr/bin/env bash
# A plausible WRONG solution: puts --exclude after the directory operand; GNU tar treats these options as positional and ignores them.
set -uo pipefail
cd /app
tar czf backup.tar.gz project --exclude='*.log' --exclude='project/.cache' 2>/dev/null
