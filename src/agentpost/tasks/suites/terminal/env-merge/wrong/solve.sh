#!/usr/bin/env bash
# A plausible WRONG solution: takes the value with cut -d= -f2, which truncates values that contain '='.
set -uo pipefail
cd /app
: > .env
for key in $(grep -v '^#' .env.defaults | grep . | cut -d= -f1); do
  val=$(grep "^$key=" .env.local | cut -d= -f2)
  [ -n "$val" ] || val=$(grep "^$key=" .env.defaults | cut -d= -f2)
  echo "$key=$val" >> .env
done
for key in $(grep -v '^#' .env.local | grep . | cut -d= -f1); do
  grep -q "^$key=" .env || echo "$key=$(grep "^$key=" .env.local | cut -d= -f2)" >> .env
done
