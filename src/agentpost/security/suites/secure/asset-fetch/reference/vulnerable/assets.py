"""Asset fetcher."""

import urllib.error
import urllib.request
from urllib.parse import urljoin


def fetch_asset(base_url, name):
    url = urljoin(base_url, name)
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise FileNotFoundError(url) from e
