"""Evidence for a decision (spec §5): upload files by path, add links, see what is attached."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from console.client import Client
from console.client.wire import EvidenceItem, RecordedEvidence
from console.views.answer import error_lines

MAX_LOCAL_FILE = 64 * 1024 * 1024


class EvidenceEditor(Vertical):
    DEFAULT_CSS = """
    EvidenceEditor { height: auto; margin-bottom: 1; }
    EvidenceEditor Horizontal { height: auto; }
    EvidenceEditor Input { width: 1fr; }
    EvidenceEditor #evidence-problem { color: $error; height: auto; }
    """

    def __init__(
        self,
        client: Client,
        required: Sequence[str] | None,
        initial: Sequence[RecordedEvidence] | None = None,
    ) -> None:
        """`initial`: evidence already given (a held candidate's), kept unless the person starts over."""
        super().__init__(id="evidence")
        self.client = client
        self.required = list(required or [])
        self.items: list[EvidenceItem] = [{"kind": i["kind"], "ref": i["ref"]} for i in initial or ()]
        self._labels: list[str] = [f"{i['kind']} {i['ref']} (from the candidate)" for i in self.items]

    def compose(self) -> ComposeResult:
        need = f"required: {', '.join(self.required)}" if self.required else "optional"
        yield Label(Text.assemble(("evidence", "bold"), "  ", (need, "dim")))
        yield Static(self._listing(), id="evidence-list")
        with Horizontal():
            yield Input(placeholder="path of a file to upload", id="evidence-path", compact=True)
            yield Button("Attach", id="attach", compact=True)
        with Horizontal():
            yield Input(placeholder="link: a URL or document number", id="evidence-link", compact=True)
            yield Button("Add link", id="add-link", compact=True)
        yield Static("", id="evidence-problem")

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "attach":
            event.stop()
            await self.attach(self.query_one("#evidence-path", Input).value.strip())
        elif event.button.id == "add-link":
            event.stop()
            self.add_link(self.query_one("#evidence-link", Input).value.strip())

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the link field adds the link; in the path field it attaches the file."""
        if event.input.id == "evidence-link":
            event.stop()
            self.add_link(event.value.strip())
        elif event.input.id == "evidence-path":
            event.stop()
            await self.attach(event.value.strip())

    def _problem(self, lines: list[str]) -> None:
        self.query_one("#evidence-problem", Static).update(Text("\n".join(lines)))

    def _listing(self) -> Text:
        return Text("\n".join(self._labels)) if self._labels else Text("nothing attached", style="dim")

    def _show(self) -> None:
        self.query_one("#evidence-list", Static).update(self._listing())

    async def attach(self, raw_path: str) -> None:
        if not raw_path:
            self._problem(["path: required"])
            return
        path = Path(raw_path).expanduser()
        try:
            if path.stat().st_size > MAX_LOCAL_FILE:
                self._problem([f"{path.name}: larger than the console uploads"])
                return
            content = path.read_bytes()
        except OSError as exc:
            self._problem([f"{raw_path}: cannot read ({exc.strerror or exc})"])
            return
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        answer = await self.client.upload(path.name, content_type, content)
        if not answer["ok"]:
            self._problem([f"upload of {path.name} refused:", *error_lines(answer)])
            return
        data = answer["data"]
        self.items.append({"kind": "file", "ref": str(data["id"])})
        self._labels.append(
            f"file {path.name} → {data['id']} · {data['bytes']} bytes · sha256 {str(data['sha256'])[:16]}…"
        )
        self.query_one("#evidence-path", Input).value = ""
        self._problem([])
        self._show()

    def add_link(self, ref: str) -> None:
        if not ref:
            self._problem(["link: required"])
            return
        self.items.append({"kind": "link", "ref": ref})
        self._labels.append(f"link {ref}")
        self.query_one("#evidence-link", Input).value = ""
        self._problem([])
        self._show()

    def issues(self) -> list[str]:
        """The acceptance rule for evidence kinds, worded as the server words it."""
        return [
            f"evidence: {kind} required"
            for kind in self.required
            if not any(i["kind"] == kind for i in self.items)
        ]
