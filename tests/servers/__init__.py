"""Small MCP servers for the tests, written without any MCP SDK."""
