"""The one error type for bad input: every reader raises it, every face turns it into one line."""

from __future__ import annotations


class InputError(ValueError):
    """Input that cannot be used, with the place it was found.

    ``where`` names the file and/or field (``tools.json: tools[3].inputSchema``) so the
    CLI can print one line and the API can answer 422 without a traceback.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)

    def located(self, where: str) -> InputError:
        """The same error, prefixed with an outer place (a file name, a request field)."""
        inner = f"{where}: {self.where}" if self.where else where
        return InputError(self.message, inner)
