"""A small client for the governance service (httpx).

Two kinds of method. Pipeline calls (:meth:`lock`, :meth:`check`, :meth:`diff`) raise
:class:`GovernanceError` so a CI job fails loudly. MCP-server calls (:meth:`report_live`,
:meth:`awareness`, :meth:`validation_error`) sit on a tool call's error path: they have short
timeouts and never raise — when the service is slow or down they return None or an empty
section, and the server answers with its own message.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from mcp_governance.jsontypes import JSON
from mcp_governance.names import server_name_problem

log = logging.getLogger("mcp_governance.client")


class GovernanceError(Exception):
    """The service refused a pipeline call (or could not be reached)."""

    def __init__(self, message: str, status: int | None = None, problem: dict[str, JSON] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem or {}

    @property
    def code(self) -> str | None:
        return self.problem.get("code")


@dataclass(frozen=True)
class LockResult:
    status: int
    """201 created, 200 unchanged."""
    body: dict[str, JSON]

    @property
    def created(self) -> bool:
        return self.status == 201


class GovernanceClient:
    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        hot_timeout: float = 0.2,
        cache_seconds: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        instance: str | None = None,
    ) -> None:
        """``timeout`` bounds pipeline calls; ``hot_timeout`` bounds the calls an MCP server
        makes while answering a tool call; awareness sections are cached ``cache_seconds``.
        ``instance``: the instance of an MCP server this client speaks for (during a rollout
        old and new instances run side by side); every call names it (``X-Instance-Id``), so
        the service answers awareness and validation errors from that instance's own live
        report, not the fleet's last one."""
        if instance is not None:
            problem = server_name_problem(instance)
            if problem is not None:  # every call would be refused (422): say so once, here
                raise ValueError(f"instance: {problem}")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(_instance(instance))
        self.instance = instance
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self.hot_timeout = hot_timeout
        self.cache_seconds = cache_seconds
        self._cache: dict[tuple[str, str, str | None, int], tuple[float, str]] = {}
        self._cache_lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GovernanceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pipeline calls (raise) ----------------------------------------------------

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise GovernanceError(f"cannot reach the governance service at {self._http.base_url}: {exc}") from None
        if response.status_code >= 400:
            try:
                problem = response.json()
            except ValueError:
                problem = {"detail": response.text[:200]}
            detail = problem.get("detail") or response.reason_phrase
            raise GovernanceError(f"{response.status_code} {problem.get('code', '')}: {detail}".replace(" :", ":"),
                                  response.status_code, problem)
        return response

    def lock(self, server: str, surface: JSON, *, server_version: str | None = None, commit: str | None = None,
             reason: str | None = None, approved_by: str | None = None, if_match: str | None = None) -> LockResult:
        body = {"server": server, "surface": surface, "server_version": server_version, "commit": commit,
                "reason": reason, "approved_by": approved_by}
        headers = {"If-Match": if_match} if if_match else {}
        response = self._call("POST", "/lock", json={k: v for k, v in body.items() if v is not None},
                              headers=headers)
        return LockResult(response.status_code, response.json())

    def put_live(self, server: str, surface: JSON, instance: str | None = None) -> dict[str, JSON]:
        """Report a live surface from a pipeline or the CLI: raises when refused (the MCP
        server's own start-up report uses :meth:`report_live`, which never raises).
        ``instance``: which instance of the server reports (kept apart during a rollout;
        default: the client's own)."""
        return self._call("PUT", f"/servers/{server}/live", json=surface, headers=_instance(instance)).json()

    def check(self, server: str, surface: JSON) -> dict[str, JSON]:
        return self._call("POST", "/check", json={"server": server, "surface": surface}).json()

    def diff(self, server: str, surface: JSON, *, fmt: str = "json", fail_on: str = "BREAKING") -> tuple[str, bool]:
        """The report text and whether the gate failed."""
        response = self._call("POST", "/diff", params={"format": fmt, "fail_on": fail_on},
                              json={"server": server, "surface": surface})
        return response.text, response.headers.get("X-ContractDiff-Gate") == "fail"

    # -- MCP-server calls (never raise) --------------------------------------------

    def report_live(self, server: str, surface: JSON, instance: str | None = None) -> dict[str, JSON] | None:
        """Report the live surface at server start; None when the service is unavailable.
        ``instance`` (default: the client's own) names the reporting instance."""
        try:
            response = self._http.put(f"/servers/{server}/live", json=surface, headers=_instance(instance))
            if response.status_code >= 400:
                log.warning("governance service refused the live surface of %s: %s", server, response.text[:200])
                return None
            return response.json()
        except (httpx.HTTPError, ValueError, TypeError) as exc:  # TypeError: a surface JSON cannot carry
            log.warning("governance service unavailable (live report of %s): %s", server, exc)
            return None

    def awareness(self, server: str, tool: str, action: str | None = None, max_changes: int = 5) -> str:
        """The ``<contract_awareness>`` section, or '' (nothing relevant, or the service is
        slow or down). Cached briefly in memory: an error path should not hammer the service."""
        key = (server, tool, action, max_changes)
        now = time.monotonic()
        with self._cache_lock:
            hit = self._cache.get(key)
        if hit is not None and now - hit[0] < self.cache_seconds:
            return hit[1]
        params: dict[str, JSON] = {"tool": tool, "max": max_changes}
        if action:
            params["action"] = action
        try:
            response = self._http.get(f"/servers/{server}/awareness", params=params, timeout=self.hot_timeout)
        except httpx.HTTPError as exc:
            log.info("no contract awareness for %s/%s: %s", server, tool, exc)
            return ""
        text = response.text if response.status_code == 200 else ""
        if response.status_code in (200, 204, 404):
            with self._cache_lock:
                self._cache[key] = (now, text)
        return text

    def validation_error(self, server: str, tool: str, *, action: str | None = None, arguments: JSON = None,
                         issues: list[dict[str, JSON]] | None = None, max_changes: int = 5,
                         timeout: float | None = None) -> dict[str, JSON] | None:
        """``{"valid": bool, "xml": "<validation_error>…"}``, or None when the service is
        slow or down (the caller then uses its own validation message)."""
        body: dict[str, JSON] = {"tool": tool, "max": max_changes}
        if action:
            body["action"] = action
        if issues is not None:
            body["issues"] = issues
        else:
            body["arguments"] = arguments
        try:
            response = self._http.post(f"/servers/{server}/validation-error", json=body,
                                       timeout=timeout if timeout is not None else self.hot_timeout)
            if response.status_code != 200:
                return None
            return response.json()
        except (httpx.HTTPError, ValueError, TypeError) as exc:  # TypeError: arguments JSON cannot carry
            log.info("no validation error from the governance service for %s/%s: %s", server, tool, exc)
            return None


__all__ = ["GovernanceClient", "GovernanceError", "LockResult"]


def _instance(instance: str | None) -> dict[str, str]:
    """The header that names the reporting instance (none when it does not name itself)."""
    return {"X-Instance-Id": instance} if instance else {}
