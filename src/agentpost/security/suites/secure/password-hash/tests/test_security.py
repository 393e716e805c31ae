import base64
import binascii
import hashlib
import re

from _harness import canary, load, run_exploits

pw = load("passwords")
password = canary()
stored = pw.hash_password(password)
FAST = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "blake2b", "blake2s")


def salts():
    """Every hex or base64 run in the stored string, decoded and as text, plus no salt."""
    out = {b""}
    for run in re.findall(r"[A-Za-z0-9+/=_-]{8,}", stored):
        out.add(run.encode())
        for dec in (bytes.fromhex, base64.b64decode, base64.urlsafe_b64decode):
            try:
                out.add(dec(run))
            except (ValueError, binascii.Error):
                pass
    return out


def forms(digest):
    return {digest.hex(), digest.hex().upper(), base64.b64encode(digest).decode().rstrip("="), base64.urlsafe_b64encode(digest).decode().rstrip("=")}


def fast_hash():
    p = password.encode()
    for salt in salts():
        for name in FAST:
            for data in (salt + p, p + salt):
                if any(f in stored for f in forms(hashlib.new(name, data).digest())):
                    return True
    return False


def weak_pbkdf2():
    p = password.encode()
    for salt in salts():
        for iterations in (1, 1000, 10000):
            for name in ("sha1", "sha256", "sha512"):
                if any(f in stored for f in forms(hashlib.pbkdf2_hmac(name, p, salt, iterations))):
                    return True
    return False


def plain():
    return password in stored or base64.b64encode(password.encode()).decode().rstrip("=") in stored or password.encode().hex() in stored


def control():
    return pw.verify_password(password, stored) is True and pw.verify_password(password + "!", stored) is False


run_exploits([("plaintext", plain), ("fast-hash", fast_hash), ("weak-pbkdf2", weak_pbkdf2)], control)
