"""How the console reaches a server: the `Client` protocol and its two transports.

`LocalClient` (console.client.local) calls an in-process engine; `RemoteClient` (console.client.remote)
calls any conforming server over MCP. Screens depend on `Client` only.
"""

from console.client.base import Capabilities, Client, ToolClient
from console.client.envelope import Envelope, failure

__all__ = ["Capabilities", "Client", "Envelope", "ToolClient", "failure"]
