"""The manual's examples (docs/*.md, docs/kinds, docs/ui; not the generated docs/reference): every fenced block,
its language and its ``<!-- example: ... -->`` marker, how a shell block is run and how its shown output is
compared. docs/development.md ("The manual is executed") describes the convention for writers.

- A block labelled ``bash`` (``sh``, ``shell``) is a script: it runs with ``bash -e -o pipefail`` and must exit 0
  (or the marker's ``exit: N``).
- A block labelled ``console`` is commands and what they print: a line starting ``$ `` is a command (a line ending
  with ``\\`` continues it), the lines after it are its standard output and error, compared whole. In shown
  output ``…`` (or ``...``) stands for any text within a line, a line holding only ``…`` (or ``...``) for any
  number of lines, trailing spaces do not count, and the example's folder is written ``/home/me``.
- Every other block needs a language too (``text``, ``toml``, ``json``, ``python``...): an unlabelled block is
  refused, so that a shell example cannot hide in one.

The marker is an HTML comment on the line right above the fence (mkdocs shows nothing of it), directives
separated by ``;``:

- ``skip: REASON`` — not run (a server, a GPU, the network, a long run); the reason shows in pytest's summary,
  and its ``curate`` lines are still checked as a synopsis's are;
- ``synopsis`` — a usage line with placeholders (``ITEM``, ``[--json]``, ``a|b``): not run, but every command
  must exist and every option it names must be one of that command's;
- ``uses: NAME[=DEMO], ...`` — copies of the demos (``demo-workspace``, ``story-demo``, ``judge-demo``, as
  getting-started.md builds them) in the example's folder, under NAME;
- ``inputs: NAME`` — the files of tests/docs/inputs/NAME/ copied into the folder the example runs in (its
  ``setup.sh``, if any, runs there first, with ``REPO`` set to the repository);
- ``env: NAME=VALUE ...`` — environment variables (``CURATE_WORKSPACE=ws``, as the page's text sets it);
- ``cwd: DIR`` — run in DIR of the example's folder (a page that says "in the workspace");
- ``exit: N`` — the exit status expected of the block (a console block's last command; ``exit: N, M, ...``
  gives each of its commands' in order). Without it, 0.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.docs.curate_server import SOCKET_VARIABLE, CurateServer

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INPUTS = Path(__file__).resolve().parent / "inputs"
SHELL = frozenset({"bash", "sh", "shell"})
CONSOLE = "console"
DEMOS = {"demo-workspace": "mcq", "story-demo": "story", "judge-demo": "judge"}
"""The demo folders getting-started.md builds, and their kinds."""
SHOWN_FOLDER = "/home/me"
"""How shown output writes the folder an example runs in."""
TIMEOUT_S = 120

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*example:(?P<body>.*?)-->\s*$")
_ELLIPSES = ("…", "...")


@dataclass(frozen=True)
class Marker:
    skip: str = ""
    synopsis: bool = False
    uses: tuple[tuple[str, str], ...] = ()
    inputs: str = ""
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    exit: tuple[int, ...] = ()
    """The exit statuses: none (all 0), one (the block's, or a console block's last command's), or one a command."""


@dataclass(frozen=True)
class Block:
    doc: str
    """The page, relative to the repository (``docs/kinds/mcq.md``)."""
    line: int
    """The opening fence's line, counted from 1."""
    language: str
    body: str
    marker: Marker = field(default_factory=Marker)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def statuses(self, commands: int) -> list[int]:
        """The exit status each of COMMANDS commands (1 for a bash block) must end with."""
        wanted = list(self.marker.exit)
        if len(wanted) <= 1:
            return [0] * (commands - 1) + (wanted or [0])
        if len(wanted) != commands:
            raise ValueError(f"{self.where}: exit: {len(wanted)} statuses for {commands} commands")
        return wanted

    @property
    def runs(self) -> bool:
        return self.language in SHELL or self.language == CONSOLE


def parse_marker(body: str, where: str) -> Marker:
    """The directives of ``<!-- example: BODY -->``; an unknown or malformed one is a ValueError naming WHERE."""
    values: dict[str, Any] = {}
    for part in (p.strip() for p in body.split(";")):
        if not part:
            continue
        name, _, value = part.partition(":")
        name, value = name.strip(), value.strip()
        if name == "synopsis" and not value:
            values["synopsis"] = True
        elif name == "skip" and value:
            values["skip"] = value
        elif name == "uses" and value:
            uses = []
            for entry in (e.strip() for e in value.split(",")):
                as_name, _, demo = entry.partition("=")
                demo = demo or as_name
                if demo not in DEMOS:
                    raise ValueError(f"{where}: uses: {demo!r} is not a demo ({', '.join(DEMOS)})")
                uses.append((as_name, demo))
            values["uses"] = tuple(uses)
        elif name == "inputs" and value:
            if not (INPUTS / value).is_dir():
                raise ValueError(f"{where}: inputs: no folder {INPUTS.relative_to(ROOT) / value}")
            values["inputs"] = value
        elif name == "env" and value:
            pairs = [word.partition("=") for word in shlex.split(value)]
            if any(not sep for _, sep, _ in pairs):
                raise ValueError(f"{where}: env: write NAME=VALUE, not {value!r}")
            values["env"] = tuple((key, val) for key, _, val in pairs)
        elif name == "cwd" and value:
            values["cwd"] = value
        elif name == "exit" and re.fullmatch(r"\d+(\s*,\s*\d+)*", value):
            values["exit"] = tuple(int(v) for v in value.split(","))
        else:
            raise ValueError(
                f"{where}: unknown example directive {part!r} (skip: REASON, synopsis, uses: NAME[=DEMO], "
                "inputs: NAME, env: NAME=VALUE, cwd: DIR, exit: N)"
            )
    return Marker(**values)


def pages(docs: Path = DOCS) -> list[Path]:
    """The manual's hand-written pages (the generated reference has no examples of its own)."""
    return sorted(p for p in docs.rglob("*.md") if "reference" not in p.relative_to(docs).parts)


def blocks(page: Path) -> Iterator[Block]:
    """Every fenced block of PAGE with its marker. A marker that is not right above a fence is a ValueError."""
    doc = page.relative_to(ROOT).as_posix()
    lines = page.read_text(encoding="utf-8").split("\n")
    index = 0
    pending: tuple[int, str] | None = None
    while index < len(lines):
        text = lines[index]
        marker = _MARKER.match(text)
        opening = _FENCE.match(text)
        if pending is not None and not opening:
            raise ValueError(f"{doc}:{pending[0]}: an example marker must sit on the line right above a fence")
        if marker:
            pending = (index + 1, marker.group("body"))
            index += 1
            continue
        if not opening:
            index += 1
            continue
        fence = opening.group("fence")
        end = index + 1
        while end < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        where = f"{doc}:{index + 1}"
        parsed = parse_marker(pending[1], where) if pending else Marker()
        language = opening.group("info").split()[0].lower() if opening.group("info") else ""
        yield Block(doc, index + 1, language, "\n".join(lines[index + 1 : end]), parsed)
        pending = None
        index = end + 1


def all_blocks(docs: Path = DOCS) -> list[Block]:
    return [block for page in pages(docs) for block in blocks(page)]


# ---- console blocks: commands and their shown output ---------------------------------------------------------


@dataclass(frozen=True)
class Step:
    command: str
    shown: list[str]


def console_steps(body: str, where: str) -> list[Step]:
    steps: list[Step] = []
    lines = body.split("\n")
    index = 0
    while index < len(lines):
        text = lines[index]
        if text.startswith("$ "):
            command = [text[2:]]
            while command[-1].endswith("\\") and index + 1 < len(lines):
                index += 1
                command.append(lines[index])
            steps.append(Step("\n".join(command), []))
        elif steps:
            steps[-1].shown.append(text)
        elif text.strip():
            raise ValueError(f"{where}: a console block starts with a `$ ` command, not {text!r}")
        index += 1
    if not steps:
        raise ValueError(f"{where}: a console block without a `$ ` command")
    return steps


def _trimmed(lines: Iterable[str]) -> list[str]:
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return out


def shown_pattern(shown: list[str]) -> re.Pattern[str]:
    """A regular expression for shown output: ``…`` any text in a line, a line of ``…`` any number of lines."""
    pieces = []
    for line in _trimmed(shown):
        if line.strip() in _ELLIPSES:
            pieces.append(r"(?:[^\n]*\n)*?")
            continue
        parts = re.split(r"(…|\.\.\.)", line)
        pieces.append("".join("[^\n]*?" if p in _ELLIPSES else re.escape(p) for p in parts) + r"\n")
    return re.compile("".join(pieces))


def output_matches(shown: list[str], actual: str) -> bool:
    lines = _trimmed(actual.split("\n"))
    return shown_pattern(shown).fullmatch("".join(f"{line}\n" for line in lines)) is not None


def output_difference(shown: list[str], actual: str) -> str:
    diff = difflib.unified_diff(_trimmed(shown), _trimmed(actual.split("\n")), "shown", "printed", lineterm="")
    return "\n".join(diff)


# ---- running ------------------------------------------------------------------------------------------------


def environment(
    home: Path, extra: Iterable[tuple[str, str]] = (), server: CurateServer | None = None
) -> dict[str, str]:
    """The shell an example runs in: the project's venv first on the PATH (SERVER's ``curate`` before it), the
    repository importable (the ``curate`` script outside the repository needs it), no CURATE_* or Label Studio
    variable of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CURATE_", "LABEL_STUDIO_", "PYTEST_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if server is not None:
        env["PATH"] = os.pathsep.join([str(server.bin), env["PATH"]])
        env[SOCKET_VARIABLE] = str(server.socket)
    env["PYTHONPATH"] = str(ROOT)
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"  # standard output and error interleaved as written
    env.update(extra)
    return env


@dataclass
class Ran:
    status: int
    output: str


def run_script(script: str, cwd: Path, env: dict[str, str], shown_folder: Path | None = None) -> Ran:
    """SCRIPT under ``bash -e -o pipefail`` in CWD, standard output and error together, the folder of the
    example (SHOWN_FOLDER's stand-in) written as SHOWN_FOLDER."""
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    output = result.stdout
    if shown_folder is not None:
        for form in {str(shown_folder.resolve()), str(shown_folder)}:
            output = output.replace(form, SHOWN_FOLDER)
    return Ran(result.returncode, output)


def run_console(steps: list[Step], cwd: Path, env: dict[str, str], shown_folder: Path) -> list[Ran]:
    """Each step's command in one shell (an ``export`` carries to the next), each with its own output and status."""
    script = ["exec 2>&1"]
    for index, step in enumerate(steps):
        script.append(step.command)
        script.append(f"printf '\\n@@example-step-end {index} %s@@\\n' $?")
    ran = run_script("set +e\n" + "\n".join(script), cwd, env, shown_folder)
    results: list[Ran] = []
    rest = ran.output
    for index in range(len(steps)):
        match = re.search(rf"\n?@@example-step-end {index} (\d+)@@\n", rest)
        if match is None:
            results.append(Ran(ran.status or -1, rest))
            break
        results.append(Ran(int(match.group(1)), rest[: match.start()]))
        rest = rest[match.end() :]
    return results


def prepare(block: Block, folder: Path, demos: dict[str, Path], server: CurateServer | None = None) -> Path:
    """FOLDER made ready for BLOCK: the demos it uses copied in, its inputs and their setup (its ``curate``
    SERVER's); the folder to run in."""
    from tests.conftest import clone_workspace

    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".home").mkdir(exist_ok=True)
    for name, demo in block.marker.uses:
        clone_workspace(demos[demo], folder / name).close()
    cwd = folder / block.marker.cwd if block.marker.cwd else folder
    if block.marker.inputs:
        source = INPUTS / block.marker.inputs
        shutil.copytree(source, cwd, dirs_exist_ok=True, ignore=shutil.ignore_patterns("setup.sh"))
        if (source / "setup.sh").exists():
            env = environment(folder / ".home", [("REPO", str(ROOT))], server)
            setup = run_script((source / "setup.sh").read_text(encoding="utf-8"), cwd, env)
            if setup.status != 0:
                raise RuntimeError(f"{source / 'setup.sh'} exited {setup.status}:\n{setup.output}")
    return cwd


# ---- synopsis blocks: commands and options that exist -------------------------------------------------------


def _command_lines(body: str) -> Iterator[str]:
    """The ``curate`` lines of a block, continuation lines joined, comments (`` # ...``) dropped."""
    joined = re.sub(r"\\\n", " ", body)
    for line in joined.split("\n"):
        line = re.split(r"(?:^|\s)#(?:\s|$)", line, maxsplit=1)[0].strip()
        line = re.sub(r"^\$ ", "", line)
        for part in re.split(r"\s&&\s", line):
            if part.strip().startswith("curate "):
                yield part.strip()


def synopsis_problems(body: str, root: Any) -> list[str]:
    """What in BODY's ``curate`` lines names no command or no option of its command (ROOT: the Click group)."""
    problems: list[str] = []
    for line in _command_lines(body):
        words = line.split()[1:]
        command, path = root, ["curate"]
        while words and words[0].startswith("-"):  # global options: -w DIR
            option = words.pop(0)
            if not _has_option(command, option):
                problems.append(f"{line}: curate has no option {option}")
            if _takes_value(command, option) and words:
                words.pop(0)
        while words and hasattr(command, "commands"):
            if words[0].lstrip("[").startswith("-") or re.fullmatch(r"[A-Z][A-Z0-9_.|-]*", words[0]):
                break  # the group's own options, or a placeholder argument
            names = [w for w in words[0].strip("[]").split("|") if w]
            unknown = [n for n in names if n not in command.commands]
            if unknown:
                problems.append(f"{line}: {' '.join(path)} has no command {'|'.join(unknown)}")
                break
            words.pop(0)
            path.append(names[0])
            command = command.commands[names[0]]
        for word in words:
            for part in re.split(r"[|\[\]]", word):
                option = part.split("=", 1)[0]
                if re.fullmatch(r"--?[a-z][a-z0-9-]*", option) and not _has_option(command, option):
                    problems.append(f"{line}: {' '.join(path)} has no option {option}")
    return problems


def _has_option(command: Any, option: str) -> bool:
    return option == "--help" or any(option in (*p.opts, *p.secondary_opts) for p in command.params)


def _takes_value(command: Any, option: str) -> bool:
    return any(option in p.opts and not getattr(p, "is_flag", False) for p in command.params)
