"""Judges for every method: the Judge protocol, OpenAI-compatible, recorded and scripted judges,
the one call path (ask, check, re-ask, abstain) and the panel configuration. No method's prompt,
parser or heuristic lives here (SCVD: ``scvd.judging``; SecureVibe: ``security.judging``)."""
