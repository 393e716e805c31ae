"""SCVD judges: the Judge protocol, OpenAI-compatible, recorded, scripted and heuristic judges,
the re-ask loop and the panel configuration."""
