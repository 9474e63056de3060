"""The headless-core contract: the engine runs without the console or Textual."""

import subprocess
import sys

PROBE = """
import sys
import engine, engine.document, engine.clock, engine.identity
import pkgutil, importlib
for mod in pkgutil.walk_packages(engine.__path__, "engine."):
    importlib.import_module(mod.name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "console"))
print(",".join(leaked))
"""


def test_importing_every_engine_module_imports_neither_textual_nor_console() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
