"""Built-in `satcc` commands; each module exposes `register(subparsers)` (see satcc.cli)."""
