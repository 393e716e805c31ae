"""Asset fetcher."""

import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit


def fetch_asset(base_url, name):
    url = urljoin(base_url, name)
    base, target = urlsplit(base_url), urlsplit(url)
    if (target.scheme, target.netloc) != (base.scheme, base.netloc) or target.scheme not in ("http", "https"):
        raise ValueError(f"asset outside the asset server: {name!r}")
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise FileNotFoundError(url) from e
