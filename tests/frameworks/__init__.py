"""End-to-end tests of ``govern()`` in each MCP framework's own environment (see envs.py)."""
