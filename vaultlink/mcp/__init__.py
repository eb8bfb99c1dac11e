"""The MCP server: the vault for assistants (``vaultlink mcp``): server, tools, answers."""
