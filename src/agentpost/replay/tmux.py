"""Replay Terminus keystroke calls in a tmux session inside the sandbox.

Each exec of a sandbox is its own process tree and nothing outlives it, so a run of consecutive
keystroke calls is replayed inside *one* exec: a small driver starts a tmux server on a private
socket, sends each call's keys with ``tmux send-keys`` (key names such as ``C-c`` or ``Enter``
work as in Terminus), waits the recorded ``duration`` (Terminus 2) or, for a blocking call
(Terminus 1 ``is_blocking``), until the command finishes or its ``timeout_sec`` passes, and
captures the screen after every call. After the last call of a run it waits (up to
``grace_s``) for the foreground command to finish, so a slow machine does not cut off work the
recorded run completed. Departure: of the shell's state only the cwd survives to
later calls (variables and running programs do not); files do.

Layer: io.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentpost.sandbox.base import Sandbox
from agentpost.trajectory.model import ToolCall

DEFAULT_DURATION_S = 1.0

_DRIVER = r"""
import json, subprocess, sys, time
req = json.load(sys.stdin)
sock = "/tmp/agentpost-tmux.sock"
T = ["tmux", "-S", sock]
subprocess.run(T + ["new-session", "-d", "-s", "main", "-x", "160", "-y", "48", "-c", req["cwd"], "bash"], check=True)
time.sleep(0.2)
def capture():
    cap = subprocess.run(T + ["capture-pane", "-p", "-t", "main"], capture_output=True, text=True)
    return cap.stdout.rstrip() + "\n"
screens = [capture()]
for k in req["calls"]:
    if k["blocking"]:
        subprocess.run(T + ["send-keys", "-t", "main", k["keys"].rstrip("\n") + f"; tmux -S {sock} wait -S agentpost-done", "Enter"])
        subprocess.run(["timeout", str(k["duration"]), *T, "wait", "agentpost-done"])
    else:
        subprocess.run(T + ["send-keys", "-t", "main", k["keys"]])
        time.sleep(k["duration"])
    screens.append(capture())
deadline = time.time() + req["grace"]  # let the last command finish before the server dies
while time.time() < deadline:
    cur = subprocess.run(T + ["display-message", "-p", "-t", "main", "#{pane_current_command}"],
                         capture_output=True, text=True).stdout.strip()
    if cur in ("bash", "sh", ""):
        break
    time.sleep(0.05)
if req["grace"]:
    screens[-1] = capture()
where = subprocess.run(T + ["display-message", "-p", "-t", "main", "#{pane_current_path}"],
                       capture_output=True, text=True).stdout.strip()
if where:
    open("/tmp/.agentpost-cwd", "w").write(where + "\n")  # a later shell call starts there
subprocess.run(T + ["kill-server"], capture_output=True)
sys.stdout.write("\n@@AGENTPOST-SCREENS@@" + json.dumps(screens))
"""


@dataclass(frozen=True)
class KeystrokeCall:
    keys: str
    duration_s: float
    blocking: bool = False


def keystroke_call(call: ToolCall, max_duration_s: float) -> KeystrokeCall:
    """Keys and wait time of a keystroke call (``arguments`` keystrokes/duration, else
    ``command``); a wait longer than ``max_duration_s`` is cut to it."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    keys = args.get("keystrokes", call.command) or ""
    blocking = bool(args.get("is_blocking", False))
    raw = args.get("duration", args.get("timeout_sec", args.get("min_timeout_sec")))
    try:
        duration = float(raw) if raw is not None else DEFAULT_DURATION_S
    except (TypeError, ValueError):
        duration = DEFAULT_DURATION_S
    return KeystrokeCall(str(keys), max(0.0, min(duration, max_duration_s)), blocking)


def send_keystrokes(
    sandbox: Sandbox, calls: list[KeystrokeCall], cwd: str, grace_s: float = 5.0
) -> tuple[list[str] | None, str]:
    """Replay ``calls`` in one tmux session: the screen before the first call and after each
    (``len(calls) + 1`` screens), or None and the driver's output when tmux could not run."""
    req = {
        "cwd": cwd,
        "grace": grace_s,
        "calls": [
            {"keys": c.keys, "duration": c.duration_s, "blocking": c.blocking} for c in calls
        ],
    }
    budget = sum(c.duration_s for c in calls) + grace_s + 30.0
    res = sandbox.exec(
        ["python3", "-c", _DRIVER],
        stdin=json.dumps(req).encode(),
        timeout_s=budget,
        cwd=cwd,
        env={"SHELL": "/bin/bash", "TERM": "xterm"},
    )
    marker = "\n@@AGENTPOST-SCREENS@@"
    if res.timed_out or marker not in res.stdout:
        return None, (res.stdout + res.stderr)[-2000:]
    screens = json.loads(res.stdout.rsplit(marker, 1)[1])
    return screens, ""


def new_output(previous: str, screen: str) -> str:
    """What a call added to the screen, the way Terminus records it: from the prompt line the
    keys were typed on to the end, without the fresh prompt left at the bottom. When the
    previous screen is no longer a prefix (it scrolled or was cleared), the whole screen."""
    prev = previous.rstrip("\n").split("\n")
    cur = screen.rstrip("\n").split("\n")
    k = len(prev) - 1
    if not (len(cur) > k and cur[:k] == prev[:k] and cur[k].startswith(prev[k])):
        return screen
    new = cur[k:]
    if len(new) > 1 and new[-1].strip() == prev[k].strip():
        new = new[:-1]  # the prompt waiting for the next keys
    return "\n".join(new) + "\n"
