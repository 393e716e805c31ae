#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
tar czf backup.tar.gz --exclude='*.log' --exclude='project/.cache' project
