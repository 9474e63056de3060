"""`apc` with no server: the engine and its MCP endpoint opened in the console's own process
(`launch`), and the sample processes it publishes on a first start (`samples`). The only part of the
console, with the client, that imports the engine beyond `engine.document`."""
