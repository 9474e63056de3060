"""What only the embedded engine offers: acting as another person of the org, and publishing a
process folder with its roles bound."""

from __future__ import annotations

from pathlib import Path

from console.client import Identity, failure
from console.flows.shell import Context
from console.modals.common import AnswerDialog, ChoiceDialog, PathDialog
from console.modals.publish import PublishDialog
from engine.document import load_path


def switch_identity(flow: Context) -> None:
    shell = flow.shell

    def chosen(identity: Identity | None) -> None:
        if identity is not None:
            flow.client.switch_identity(identity)
            shell.main.work.forget()
            flow.lists.forget()
            shell.toast(f"Now acting as {identity.id}")
            shell.reload_soon()

    choices = [(f"{p.id}{' (operator)' if p.operator else ''}", p) for p in flow.client.people()]
    shell.push_screen(ChoiceDialog("Act as which person?", choices), chosen)


def publish(flow: Context) -> None:
    """Ask for the folder, then for the group of every role (showing what it `requires`), and
    publish only once the operator confirms (spec §7)."""
    shell = flow.shell

    def chosen_path(path: str | None) -> None:
        if path is None:
            return
        source = Path(path).expanduser()
        loaded = load_path(source)
        if loaded.process is None:
            answer = failure("invalid", f"{path} cannot be published", [str(i) for i in loaded.issues])
            shell.push_screen(AnswerDialog("Publish", answer))
            return

        async def confirmed(bind: dict[str, str] | None) -> None:
            if bind is not None:
                await publish_bound(flow, source, bind)

        shell.push_screen(PublishDialog(source, loaded.process), confirmed)

    shell.push_screen(PathDialog("Publish a process folder"), chosen_path)


async def publish_bound(flow: Context, source: Path, bind: dict[str, str]) -> None:
    shell = flow.shell
    result = await flow.client.publish(source, bind)
    if result.ok:
        state = "published" if result.created else "unchanged, already published"
        shell.toast(f"{result.name} v{result.version}: {state}")
        shell.reload_soon()
    else:
        answer = failure("invalid", f"{source} was not published", list(result.issues))
        await shell.push_screen(AnswerDialog("Publish", answer))
