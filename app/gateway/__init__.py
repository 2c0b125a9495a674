"""The governance gateway: an MCP server in front of any MCP server (``mcp-governance gateway``).

- :mod:`app.gateway.policy`: the mode's verdict on each tool, a pure function of the diff;
- :mod:`app.gateway.locks`: where the lock comes from (a lockfile directory, or the service
  with a disk cache) and where the live surface is reported;
- :mod:`app.gateway.core`: the contract check and what a ``tools/call`` gets, over the
  service functions (:class:`app.service.Governance`);
- :mod:`app.gateway.proxy`: the MCP wiring on the official SDK (client upstream, low-level
  server downstream, everything ungoverned forwarded raw).

Nothing is imported here: ``mcp-governance --help`` must not load the SDK.
"""
