#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > textstats/__init__.py <<'EOF'
"""Small text statistics used by the reporting job."""


def word_count(text):
    """Number of whitespace-separated words in text."""
    return len(text.split())


def mean_word_length(text):
    """Mean length of the words in text (0.0 for no words)."""
    words = text.split()
    if not words:
        return 0.0
    return sum(len(w) for w in words) / len(words)


def top_word(text):
    """The most frequent word (lower-cased); ties go to the word seen first."""
    counts = {}
    for w in text.lower().split():
        counts[w] = counts.get(w, 0) + 1
    return max(counts, key=counts.get) if counts else None
EOF
# Drop bytecode compiled from an earlier version: a rewrite of the same size within the same
# second would otherwise run stale .pyc files.
find /app -name __pycache__ -type d -prune -exec rm -rf {} +
