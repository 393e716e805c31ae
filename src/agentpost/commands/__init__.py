"""CLI commands, one module per area, each with ``register(app)``. Layer: edges."""
