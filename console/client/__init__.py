"""How the console reaches a server: the `Client` protocol and its two transports.

`LocalClient` (console.client.local) calls an in-process engine; `RemoteClient` (console.client.remote)
calls any conforming server over MCP. Screens depend on `Client` only, and on the few engine values a
client hands them (who it acts as, the clock, a publish result), re-exported here so that the rest of
the console never imports the engine beyond `engine.document`.
"""

from console.client.base import Capabilities, Client, ToolClient, Who
from console.client.envelope import failure
from console.client.wire import Envelope, Failure, Ok
from engine.clock import Clock
from engine.identity import Identity
from engine.tools.catalog import PublishResult

__all__ = [
    "Capabilities",
    "Client",
    "Clock",
    "Envelope",
    "Failure",
    "Identity",
    "Ok",
    "PublishResult",
    "ToolClient",
    "Who",
    "failure",
]
