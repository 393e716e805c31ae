#!/usr/bin/env bash
# Print the total number of lines in all *.txt files under the directory $1.
total=0
for f in $1/*.txt; do
  n=$(wc -l < $f)
  total=$((total + n))
done
echo $total
