#!/usr/bin/env bash
# Oracle solution.
set -euo pipefail
cd /app
cat > pager.py <<'EOF'
"""Pagination helpers (pages are numbered from 1)."""


def page_count(n_items, per_page):
    """How many pages n_items fill at per_page items per page (0 items: 0 pages)."""
    return -(-n_items // per_page)


def paginate(items, page, per_page):
    """The items on page `page` (1-based); an empty list past the last page."""
    start = (page - 1) * per_page
    return items[start:start + per_page]
EOF
# Drop bytecode compiled from an earlier version: a rewrite of the same size within the same
# second would otherwise run stale .pyc files.
find /app -name __pycache__ -type d -prune -exec rm -rf {} +
