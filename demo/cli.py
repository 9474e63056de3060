"""`apc demo`: the console on a fresh demo engine with agents, people and a stream of runs, or the
same story `--headless` with a summary and an exit status.

`apc demo ARGS` calls `main(ARGS)` (apc/cli.py); `python -m demo ARGS` does the same.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from console.embedded.samples import no_samples, sample_folders
from demo.actors.people import PeopleBehaviour
from demo.fronts.headless import run_headless, run_story_headless
from demo.stories.story import StoryError, UnknownStory, load_story, story_names
from demo.system import DemoSettings
from demo.world.relations import RelationsError
from engine.datafolder import DataFolderInUse
from engine.http.serve import port_number

HELP = "a live demo: sample processes, demo agents over MCP, demo people and a stream of runs"
DESCRIPTION = (
    "Start a fresh demo engine with the sample processes published, its MCP endpoint on 127.0.0.1\n"
    "(first free port from 8765, or --port), demo agents working over MCP with their own tokens, demo people\n"
    "deciding their work items, an event feed, and a steady stream of new runs on a fast clock.\n"
    "Model checks are answered from the bundled sample_processes/check-answers.toml (no model needed).\n"
    "The console opens as the operator, who is in every group and receives the escalations,\n"
    "including the submissions a check was unsure of."
)
EPILOG = (
    "exit status (--headless):\n"
    "  0  every run ended with an outcome its process allows (a story: it played to its end with the\n"
    "     outcomes it declares)\n"
    "  1  a run ended otherwise, did not end within the time limit, or a demo part failed\n"
    "  2  usage (an unknown story among them)\n\n"
    "examples:\n"
    "  apc demo\n"
    "  apc demo --speed 120 --seed 7\n"
    "  apc demo --web --port 0\n"
    "  apc demo --headless --runs 20\n"
    "  apc demo --list-stories\n"
    "  apc demo --story operator-triage\n"
    "  apc demo --story operator-triage --headless"
)
DEFAULT_SPEED = 90.0
DEFAULT_HEADLESS_SPEED = 600.0
DEFAULT_HEADLESS_RUNS = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, metavar="DIR", help="data folder (default: a fresh temporary one)"
    )
    parser.add_argument(
        "--speed",
        type=float,
        metavar="N",
        help=f"demo clock speed, times real time (default {DEFAULT_SPEED:g}, headless {DEFAULT_HEADLESS_SPEED:g})",
    )
    parser.add_argument(
        "--seed", type=int, default=1, metavar="S", help="seed for every random choice (default 1)"
    )
    parser.add_argument("--agents", type=int, default=3, metavar="N", help="demo agents (1 to 6, default 3)")
    parser.add_argument(
        "--port",
        type=port_number,
        metavar="N",
        help="port of the demo's MCP endpoint on 127.0.0.1, 0 for any free one (default: first free from 8765);"
        " with --web, the port of the page (default 8000), and the endpoint takes the first free from 8765",
    )
    parser.add_argument("--headless", action="store_true", help="no console: progress lines and a summary")
    parser.add_argument(
        "--story",
        metavar="NAME",
        help="play a scripted story (see --list-stories): in the console its acts are yours, cued on screen;"
        " with --headless it plays them itself on a simulated clock and checks the outcomes it declares",
    )
    parser.add_argument("--list-stories", action="store_true", help="name the stories --story can play")
    parser.add_argument(
        "--web", action="store_true", help="serve the console in a browser instead, one console per tab"
    )
    parser.add_argument("--host", metavar="H", help="--web: address the page listens on (default 127.0.0.1)")
    parser.add_argument(
        "--runs",
        type=int,
        metavar="N",
        help=f"headless: runs to start and wait for (default {DEFAULT_HEADLESS_RUNS})",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="headless: give up after this many real seconds (default 600)",
    )


def settings_from(args: argparse.Namespace) -> DemoSettings:
    speed = args.speed or (DEFAULT_HEADLESS_SPEED if args.headless else DEFAULT_SPEED)
    settings = DemoSettings(
        data_dir=args.data, speed=speed, seed=args.seed, agents=args.agents, port=args.port
    )
    if args.headless:
        return replace(settings, runs=args.runs or DEFAULT_HEADLESS_RUNS)
    return replace(settings, runs=args.runs, people=PeopleBehaviour(play_operator=False))


def check(args: argparse.Namespace) -> str | None:
    """A usage problem with the arguments, or None."""
    if args.speed is not None and args.speed <= 0:
        return "--speed must be positive"
    if args.runs is not None and args.runs < 1:
        return "--runs must be at least 1"
    if not 1 <= args.agents <= 6:
        return "--agents must be between 1 and 6"
    if args.time_limit <= 0:
        return "--time-limit must be positive"
    if args.web and (args.headless or args.runs is not None):
        return "--web shows the live demo; it takes neither --headless nor --runs"
    if not args.web and args.host is not None:
        return "--host is for --web"
    if args.story is not None and (args.web or args.runs is not None):
        return "--story plays its own runs; it takes neither --web nor --runs"
    return None


def list_stories(out: TextIO) -> int:
    names = story_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        story = load_story(name)
        out.write(f"{name:<{width}}  {story.title} (as the {story.user})\n")
    return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    problem = check(args)
    if problem is not None:
        print(f"apc demo: error: {problem}", file=sys.stderr)
        return 2
    try:
        if args.list_stories:
            return list_stories(out)
        story = load_story(args.story) if args.story is not None else None
    except StoryError as error:
        print(f"apc demo: error: {error}", file=sys.stderr)
        return 2 if isinstance(error, UnknownStory) else 1
    settings = settings_from(args)
    if story is not None and args.speed is None and not args.headless:
        settings = replace(settings, speed=story.speed)
    if not sample_folders(settings.samples):
        print(f"apc demo: error: {no_samples(settings.samples)}", file=sys.stderr)
        return 1
    if args.web:
        from demo.fronts.web import DEFAULT_PORT, run_web

        args.host = args.host or "127.0.0.1"
        args.port = DEFAULT_PORT if args.port is None else args.port
        return run_web(args, settings.speed)
    try:
        if story is not None and args.headless:
            return 0 if asyncio.run(run_story_headless(story, settings, out)).ok else 1
        if args.headless:
            report = asyncio.run(run_headless(settings, out, time_limit=args.time_limit))
            return report.exit_code
        from demo.fronts.terminal import run_ui

        return asyncio.run(run_ui(settings, story))
    except (DataFolderInUse, OSError, RelationsError) as error:
        print(f"apc demo: error: {error}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="apc demo",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    return run(args)
