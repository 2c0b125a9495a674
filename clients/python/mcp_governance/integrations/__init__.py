"""``govern(server, url=...)``: one entry point for every Python MCP framework.

    from mcp_governance import govern
    govern(server, url="http://127.0.0.1:8000")      # token=..., budget=0.2 (seconds)

``server`` may be any of:

=========================================  ===============================  ===========================
framework                                  server class                     module here
=========================================  ===============================  ===========================
official SDK 1.x (``mcp<2``)               ``mcp.server.fastmcp.FastMCP``   :mod:`.mcp_v1`
official SDK 1.x, low level                ``mcp.server.lowlevel.Server``   :mod:`.mcp_v1`
official SDK 2.x (``mcp>=2``)              ``mcp.server.mcpserver.MCPServer``  :mod:`.mcp_v2`
official SDK 2.x, low level                ``mcp.server.lowlevel.Server``   :mod:`.mcp_v2`
the ``fastmcp`` package                    ``fastmcp.FastMCP``              :mod:`.fastmcp_pkg`
=========================================  ===============================  ===========================

The framework is recognised from the server's class (its module path), so this module
imports none of them; the one module for the framework given is imported then. Whatever the
framework, a governed server:

- reports its live surface to ``PUT /servers/{name}/live`` at start, from a background
  thread (start-up never waits for the service);
- answers a call whose arguments fail validation with the service's ``<validation_error>``
  and ``<contract_awareness>`` (within ``budget``; else the framework's own message);
- answers a call to a tool it does not have with ``<tool_error code="UNKNOWN_ACTION">``,
  the tools it has, and the service's awareness for that name (removed or renamed);
- sends a returned or raised ``<tool_error>`` intact, and turns any other exception into a
  critical ``INTERNAL_ERROR`` with an incident id (the text goes to the server log only).
"""

from __future__ import annotations

import importlib
from typing import Any

from mcp_governance.integrations._core import DEFAULT_BUDGET, MARK, REPORT_TIMEOUT, Governed
from mcp_governance.names import server_name_problem

# (class path in the server's MRO, module here, framework label); the first match wins.
FRAMEWORKS: tuple[tuple[str, str, str], ...] = (
    ("fastmcp.server.server.FastMCP", "fastmcp_pkg", "fastmcp"),
    ("mcp.server.mcpserver.server.MCPServer", "mcp_v2", "mcp 2.x MCPServer"),
    ("mcp.server.fastmcp.server.FastMCP", "mcp_v1", "mcp 1.x FastMCP"),
    ("mcp.server.lowlevel.server.Server", "", "mcp low-level Server"),
)


def _class_paths(server: Any) -> list[str]:
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in type(server).__mro__]


def framework_of(server: Any) -> tuple[str, str]:
    """``(module here, label)`` for the framework ``server`` belongs to; TypeError when none."""
    paths = _class_paths(server)
    for path, module, label in FRAMEWORKS:
        if path in paths:
            if not module:
                # The low-level Server keeps its class path across SDK majors: 2.x has the
                # public get_request_handler, 1.x the request_handlers dict.
                module = "mcp_v2" if hasattr(server, "get_request_handler") else "mcp_v1"
                label = f"{label} ({'2.x' if module == 'mcp_v2' else '1.x'})"
            return module, label
    raise TypeError(
        f"govern() does not know {type(server).__module__}.{type(server).__qualname__}: pass an MCP SDK FastMCP "
        "(mcp 1.x), MCPServer (mcp 2.x), low-level Server, or a fastmcp.FastMCP")


def govern(
    server: Any,
    *,
    url: str,
    server_name: str | None = None,
    token: str | None = None,
    budget: float = DEFAULT_BUDGET,
    report_live: bool = True,
    report_timeout: float = REPORT_TIMEOUT,
    max_changes: int = 5,
    instance: str | None = None,
) -> Governed:
    """Put ``server`` under the governance service at ``url``; call it once, before or after
    registering tools (every tool is covered, whenever it was added).

    ``server_name`` defaults to the server's name and must be a valid lockfile name (the
    name the server was locked under). ``budget`` bounds what a failed call may wait for
    the service. ``report_live=False`` skips the start-up report (then call ``await
    governed.report_live()``, or ``anyio.run(governed.report_live)``, yourself).
    ``instance`` names this instance of the server (a pod or host name): its live report
    is kept apart from the other instances', and its models' awareness and validation
    errors come from its own report (during a rollout old and new instances differ).
    """
    if getattr(server, MARK, None) is not None:
        raise RuntimeError(f"the server {getattr(server, 'name', server)!r} is already governed")
    if not budget > 0:
        raise ValueError(f"budget must be a positive number of seconds, not {budget!r}")
    module_name, _ = framework_of(server)
    name = server_name or getattr(server, "name", None)
    problem = server_name_problem(name)
    if problem is not None:
        raise ValueError(f"server_name: {problem}; pass server_name= the name the server is locked under")
    module = importlib.import_module(f"mcp_governance.integrations.{module_name}")
    from mcp_governance.client import GovernanceClient

    client = GovernanceClient(url, token, timeout=report_timeout, hot_timeout=budget, instance=instance)
    governed: Governed = module.governed_for(server, client, name, budget, max_changes)
    governed.install()
    if report_live:
        governed.install_startup()
    setattr(server, MARK, governed)
    return governed


__all__ = ["DEFAULT_BUDGET", "FRAMEWORKS", "Governed", "framework_of", "govern"]
