"""What an MCP client learns about each tool from `tools/list`: a title, a description, the argument
schema with a description for every argument, the output schema of the whole envelope, and hints.

The argument schemas come from the argument models (`engine.tools.arguments`), the output schemas
from the result shapes (`engine.tools.results`); this module adds the words and the hints. Every
write takes a `requestId`, and repeating a write with the same one changes nothing, so every write
is idempotent. `cancel` ends a run and `decide` can fail or reject one: those two are destructive.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, cast

import mcp_types as types
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from engine.tools.arguments import ARGUMENTS
from engine.tools.results import RESULTS, Failure, Success


@dataclass(frozen=True)
class ToolWords:
    title: str
    description: str
    read_only: bool = False
    destructive: bool = False


TOOLS: dict[str, ToolWords] = {
    "describe": ToolWords(
        "Describe the server",
        "What this server offers: protocol version, profiles, lease length, person format, tools, limits.",
        read_only=True,
    ),
    "list_processes": ToolWords(
        "List processes", "The published processes, with their inputs and versions, paged.", read_only=True
    ),
    "start_run": ToolWords(
        "Start a run", "Start a run of a published process with its inputs; returns the run view."
    ),
    "get_run": ToolWords(
        "Read a run",
        "The run view: run data, step states, open work items and the process body.",
        read_only=True,
    ),
    "get_work": ToolWords(
        "Find work",
        "For an agent: ready steps it may claim. For a person: their open work items. Oldest first.",
        read_only=True,
    ),
    "claim": ToolWords(
        "Claim a step",
        "Claim a ready agent step: a lease token, the step, the process body, run data and handoff.",
    ),
    "renew": ToolWords(
        "Renew a lease", "Extend a claim's lease with a fresh token, optionally leaving a progress note."
    ),
    "upload": ToolWords("Upload a file", "Store a file (base64) and get the id to cite as file evidence."),
    "submit": ToolWords(
        "Submit a step", "Submit a claimed step: output, evidence, summary and the chosen next step."
    ),
    "escalate": ToolWords(
        "Escalate a step", "Hand a claimed step to a person with a note saying why it cannot be finished."
    ),
    "decide": ToolWords(
        "Decide a work item",
        "A person's decision on a work item: completed, approved, rejected, returned or failed.",
        destructive=True,
    ),
    "cancel": ToolWords(
        "Cancel a run", "Cancel an active or waiting run with a reason (operators).", destructive=True
    ),
    "send_event": ToolWords("Send an event", "Deliver a named event, with optional data, to one run."),
    "list_runs": ToolWords(
        "List runs", "Runs filtered by process, state and input values, paged.", read_only=True
    ),
}

ARGUMENT_WORDS: dict[str, str] = {
    "cursor": "The nextCursor of the previous page; omit it for the first page.",
    "limit": "Items per page, 1 to 100 (default 20).",
    "process": "The name of a published process.",
    "version": "A published version of the process to run; omit it for the latest.",
    "inputs": "A value for each input the process declares, by input name.",
    "mode": "live (the default), or test: a test run must cause no real effects and sends no notifications.",
    "requestId": "A fresh unique id for this write; send the same one again to retry it safely.",
    "runId": "The run's id.",
    "stepId": "The id of a ready agent step of the run.",
    "token": "The lease token from claim, or from the last renew.",
    "progress": "How far the work has got, handed to the next attempt if the lease ends.",
    "fileName": "The file's name.",
    "contentType": "The file's media type, e.g. application/pdf.",
    "contentBase64": "The file's bytes, base64-encoded.",
    "output": "The step's output fields, by name, as the step declares them.",
    "evidence": "Evidence for the work: uploaded file ids and links.",
    "summary": "What was done, for the people who read the run.",
    "next": "The id of the next step, when the step offers a choice of routes.",
    "reason": "Why this route, or this decision, was taken.",
    "note": "Why the step cannot be finished (escalate), or what to do differently (decide: returned).",
    "workItemId": "The id of the work item being decided.",
    "snapshot": "The snapshot the work item carried when it was read; a newer state of the run makes the "
    "decision stale.",
    "decision": "One of the decisions the work item lists.",
    "name": "The event's name, as a wait_for step names it.",
    "data": "The event's data fields.",
    "state": "Only runs in this state.",
    "kind": "file: the id of an uploaded file; link: a URL.",
    "ref": "The file id, or the URL.",
}
"""One description per argument name: a name means the same in every tool that takes it."""

TOOL_ARGUMENT_WORDS: dict[tuple[str, str], str] = {
    ("get_work", "process"): "Only work of this process.",
    ("list_runs", "process"): "Only runs of this process.",
    ("list_runs", "inputs"): "Only runs whose inputs have exactly these values, by input name.",
    ("cancel", "reason"): "Why the run is cancelled; recorded with the run.",
    ("send_event", "runId"): "The run to deliver the event to.",
}
"""Where one tool uses a name more narrowly than the others."""


class _Untitled(GenerateJsonSchema):
    """No generated `title` on every field: the property name says it already."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def input_schema(tool: str) -> dict[str, Any]:
    """The argument model's JSON Schema, with every argument (nested ones too) described."""
    schema = copy.deepcopy(ARGUMENTS[tool].model_json_schema())
    for properties in _property_tables(schema):
        for name, prop in properties.items():
            prop["description"] = TOOL_ARGUMENT_WORDS.get((tool, name), ARGUMENT_WORDS[name])
    return schema


def output_schema(tool: str) -> dict[str, Any]:
    """The structured content of every call of `tool`: `{ok: true, data}` or `{ok: false, error}`."""
    success: Any = cast(Any, Success)[RESULTS[tool]]
    schema = TypeAdapter(success | Failure).json_schema(schema_generator=_Untitled)
    return {
        "type": "object",
        "title": f"{tool} envelope",
        "description": f"ok: true with the {tool} result as data, or ok: false with the error.",
        **schema,
    }


def tool_annotations(tool: str) -> types.ToolAnnotations:
    words = TOOLS[tool]
    if words.read_only:
        return types.ToolAnnotations(title=words.title, read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        title=words.title,
        read_only_hint=False,
        destructive_hint=words.destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )


def tool_definitions(tools: list[str]) -> list[types.Tool]:
    return [
        types.Tool(
            name=name,
            title=TOOLS[name].title,
            description=TOOLS[name].description,
            input_schema=input_schema(name),
            output_schema=output_schema(name),
            annotations=tool_annotations(name),
        )
        for name in tools
    ]


def _property_tables(schema: dict[str, Any]) -> list[dict[str, Any]]:
    tables = [schema.get("properties", {})]
    tables += [definition.get("properties", {}) for definition in schema.get("$defs", {}).values()]
    return tables
