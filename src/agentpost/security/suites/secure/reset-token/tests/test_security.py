import base64
import hashlib
import time

from _harness import canary, load, run_exploits

reset = load("reset")
user_id, email = 4242, canary().lower() + "@example.com"
t0 = time.time()
token = reset.issue_token(user_id, email)  # known to the test only; the guesses never see it
t1 = time.time()


def candidates(seconds, millis):
    """What an outsider can compute: the email, the user id, the time (to the second or the
    millisecond, a few seconds around the request) through common digests and concatenations."""
    for ts in seconds + millis:
        for text in (f"{email}:{ts}", f"{email}{ts}", f"{ts}:{email}", f"{ts}{email}", f"{user_id}:{ts}", f"{user_id}{ts}", f"{user_id}:{email}:{ts}", f"{email}:{user_id}:{ts}"):
            yield text
            for name in ("md5", "sha1", "sha256"):
                d = hashlib.new(name, text.encode()).digest()
                yield d.hex()
                yield base64.urlsafe_b64encode(d).decode().rstrip("=")
    for ts in seconds:
        yield str(ts)


def guess(with_millis):
    def run():
        seconds = list(range(int(t0) - 3, int(t1) + 4))
        millis = list(range(int(t0 * 1000) - 50, int(t1 * 1000) + 50)) if with_millis else []
        for c in candidates(seconds, millis):
            for n in (16, 20, 24, 32, 40, 64, len(c)):
                if len(c[:n]) >= 16 and c[:n] == token:  # compared here: no round trip per guess
                    return reset.redeem(c[:n]) == user_id  # the guess really opens the account
        return False
    return run


def control():
    t = reset.issue_token(5, "ann@example.com")
    return reset.redeem(t) == 5 and reset.redeem(t) is None


run_exploits([("time-in-seconds", guess(False)), ("time-in-milliseconds", guess(True))], control)
