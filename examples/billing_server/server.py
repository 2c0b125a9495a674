"""A small billing MCP server on the official MCP SDK, in two versions of its contract.

``BILLING_VERSION=v1`` (the contract a model learned)::

    get_invoice(id)                  list_invoices(customer)

``BILLING_VERSION=v2`` (the default; what the server exposes now)::

    get_invoice(id, currency)        list_invoices(customer_id)
    currency is required, one of EUR, USD; customer was renamed to customer_id

With ``MCP_GOVERNANCE_URL`` set, the server is governed: it reports its live surface at
start, and a call that fails validation gets the service's ``<validation_error>`` with the
``<contract_awareness>`` of what changed since the lock. Without it, it is a plain SDK
server. Run it over stdio: ``python examples/billing_server/server.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer

from mcp_governance.errors import ErrorCode, ToolError

INVOICES = {
    "inv_1001": {"customer_id": "cus_7", "amount_cents": 12900, "currency": "EUR"},
    "inv_1002": {"customer_id": "cus_7", "amount_cents": 4500, "currency": "USD"},
    "inv_1003": {"customer_id": "cus_9", "amount_cents": 99000, "currency": "EUR"},
}
RATES = {("EUR", "USD"): 1.1, ("USD", "EUR"): 1 / 1.1}


def _invoice(invoice_id: str) -> dict[str, object]:
    invoice = INVOICES.get(invoice_id)
    if invoice is None:
        # The error contract: the model reads what went wrong and what to do next.
        raise ToolError(ErrorCode.NOT_FOUND, f"No invoice {invoice_id!r}",
                        suggestion="List the customer's invoices first, then retry with a real id.",
                        available_actions=["list_invoices"], details={"requestedId": invoice_id})
    return invoice


def _amount(invoice: dict[str, object], currency: str) -> str:
    cents = int(invoice["amount_cents"])  # type: ignore[call-overload]
    if currency != invoice["currency"]:
        cents = round(cents * RATES[(str(invoice["currency"]), currency)])
    return f"{cents / 100:.2f} {currency}"


def _listing(customer: str) -> str:
    found = [f"{key}: {_amount(value, str(value['currency']))}" for key, value in INVOICES.items()
             if value["customer_id"] == customer]
    return "\n".join(found) or f"no invoices for {customer}"


def register_v1(server: MCPServer) -> None:
    @server.tool()
    def get_invoice(id: str) -> str:
        """Get one invoice by its id (e.g. inv_1001), in its own currency."""
        invoice = _invoice(id)
        return f"{id}: {_amount(invoice, str(invoice['currency']))}"

    @server.tool()
    def list_invoices(customer: str) -> str:
        """List a customer's invoices (e.g. cus_7)."""
        return _listing(customer)


def register_v2(server: MCPServer) -> None:
    @server.tool()
    def get_invoice(id: str, currency: Literal["EUR", "USD"]) -> str:
        """Get one invoice by its id (e.g. inv_1001), converted to the currency asked for."""
        return f"{id}: {_amount(_invoice(id), currency)}"

    @server.tool()
    def list_invoices(customer_id: str) -> str:
        """List a customer's invoices (e.g. cus_7)."""
        return _listing(customer_id)


def build(version: str) -> MCPServer:
    """The server at one contract version, governed when MCP_GOVERNANCE_URL is set."""
    if version not in ("v1", "v2"):
        raise SystemExit(f"billing: BILLING_VERSION must be v1 or v2, not {version!r}")
    server = MCPServer("billing", version="1.0.0" if version == "v1" else "2.0.0",
                       instructions="Invoices of the billing system.")
    (register_v1 if version == "v1" else register_v2)(server)
    url = os.environ.get("MCP_GOVERNANCE_URL")
    if url:
        from mcp_governance import govern

        govern(server, url=url, token=os.environ.get("MCP_GOVERNANCE_TOKEN"),
               budget=float(os.environ.get("MCP_GOVERNANCE_BUDGET", "0.2")))
    return server


if __name__ == "__main__":
    print(f"billing {os.environ.get('BILLING_VERSION', 'v2')} on stdio", file=sys.stderr)
    build(os.environ.get("BILLING_VERSION", "v2")).run()
