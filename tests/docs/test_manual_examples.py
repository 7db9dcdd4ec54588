"""The manual is executed (issue 43): every shell example of docs/ runs, in a folder of its own holding copies of
the demos it names, and what it shows it prints (what the manual says about the demos: test_manual_claims.py).

The convention (markers, console blocks, the ``…`` wildcard) is in tests/docs/manual_examples.py and
docs/development.md. The demos are built once (tests/docs/conftest.py, by the commands getting-started.md shows);
every example gets copies, so examples never see each other's changes. A failure names the page and line of the
example."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.conftest import DEMO_COMMANDS, MANUAL_GROUP, Demos
from tests.docs.curate_server import CurateServer
from tests.docs.manual_examples import (
    CONSOLE,
    DEMOS,
    SHELL,
    Block,
    Step,
    blocks,
    console_steps,
    environment,
    output_difference,
    output_matches,
    pages,
    prepare,
    run_console,
    run_script,
    synopsis_problems,
)

pytestmark = pytest.mark.xdist_group(MANUAL_GROUP)


def _read_pages() -> tuple[list[Block], list[str]]:
    found: list[Block] = []
    problems: list[str] = []
    for page in pages():
        try:
            found.extend(blocks(page))
        except ValueError as exc:
            problems.append(str(exc))
    return found, problems


BLOCKS, MARKER_PROBLEMS = _read_pages()
EXAMPLES = [block for block in BLOCKS if block.runs]


# ---- every block is labelled, every marker understood -------------------------------------------------------


def test_every_marker_is_understood_and_sits_on_a_block() -> None:
    assert MARKER_PROBLEMS == []


def test_every_block_names_its_language() -> None:
    """An unlabelled block could be a shell example nobody runs; a ``$ `` prompt belongs in a console block."""
    unlabelled = [f"{b.where}: label the block (bash, console, text, toml, json...)" for b in BLOCKS if not b.language]
    prompts = [
        f"{b.where}: a `$ ` command in a {b.language} block: make it a console block"
        for b in BLOCKS
        if not b.runs and b.body.lstrip().startswith("$ ")
    ]
    assert unlabelled + prompts == []


# ---- the examples run ---------------------------------------------------------------------------------------


def _demo_builds(block: Block) -> set[str] | None:
    """The demo folders a block of nothing but ``curate demo`` commands builds, or None for any other block."""
    built = set()
    for line in block.body.split("\n"):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[:2] != ["curate", "demo"]:
            return None
        kind = "mcq"
        rest = words[2:]
        if "--kind" in rest:
            at = rest.index("--kind")
            kind = rest[at + 1]
            del rest[at : at + 2]
        if len(rest) != 1 or DEMOS.get(rest[0]) != kind:
            return None
        built.add(rest[0])
    return built or None


@pytest.mark.parametrize("block", EXAMPLES, ids=[block.where for block in EXAMPLES])
def test_the_example_runs_and_prints_what_it_shows(
    block: Block, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if block.marker.skip or block.marker.synopsis:
        from typer.main import get_command

        from omnicurate.cli.main import app

        assert synopsis_problems(block.body, get_command(app)) == [], block.where
        if block.marker.skip:
            pytest.skip(f"{block.where}: {block.marker.skip}")
        return
    demos: Demos = request.getfixturevalue("manual_demos")  # only an example that runs waits for the demos
    built = _demo_builds(block) if block.language in SHELL else None
    if built is not None:  # manual_demos ran these very commands (and checked their exit status)
        assert built <= set(demos), block.where
        return
    server: CurateServer | None = request.getfixturevalue("curate_server")
    folder = tmp_path / "example"
    cwd = prepare(block, folder, demos, server)
    env = environment(folder / ".home", block.marker.env, server)
    if block.language in SHELL:
        ran = run_script(block.body, cwd, env, folder)
        assert ran.status == block.statuses(1)[0], f"{block.where}: exited {ran.status}:\n{ran.output}"
        return
    assert block.language == CONSOLE
    steps = console_steps(block.body, block.where)
    results = run_console(steps, cwd, env, folder)
    assert len(results) == len(steps), f"{block.where}: stopped after {len(results)} command(s):\n{results[-1]}"
    for step, ran, expected in zip(steps, results, block.statuses(len(steps)), strict=True):
        assert ran.status == expected, f"{block.where}: `{step.command}` exited {ran.status}:\n{ran.output}"
        assert output_matches(step.shown, ran.output), (
            f"{block.where}: `{step.command}` printed other than shown:\n{output_difference(step.shown, ran.output)}"
        )


# ---- the convention's own checks -----------------------------------------------------------------------------


def test_shown_output_matches_whole_lines_with_wildcards() -> None:
    shown = ["$ curate status", "...", "2 admitted, … returned"]
    assert output_matches(shown[1:], "a\nb\n2 admitted, 5 returned\n")
    assert output_matches(shown[1:], "2 admitted, 5 returned")
    assert not output_matches(shown[1:], "2 admitted, 5 returned\nmore")
    assert not output_matches(["exactly"], "exactly not")
    assert console_steps("$ a \\\n  b\nout\n$ c", "x") == [Step("a \\\n  b", ["out"]), Step("c", [])]


def test_a_synopsis_naming_an_unknown_command_or_option_is_refused() -> None:
    from typer.main import get_command

    from omnicurate.cli.main import app

    root = get_command(app)
    assert synopsis_problems("curate release build VERSION [--allow-partial] [--jsn]", root) == [
        "curate release build VERSION [--allow-partial] [--jsn]: curate release build has no option --jsn"
    ]
    assert synopsis_problems("curate -w ws judge ls push|pull score  # comment --nothing", root) == []
    assert synopsis_problems("curate releases list", root) == ["curate releases list: curate has no command releases"]


def test_a_block_run_in_a_folder_writes_that_folder_as_home_me(tmp_path: Path) -> None:
    ran = run_script("pwd; exit 3", tmp_path, environment(tmp_path), tmp_path)
    assert (ran.status, ran.output) == (3, "/home/me\n")
    steps = console_steps("$ export A=1\n$ echo $A; echo err >&2\n$ false", "x")
    results = run_console(steps, tmp_path, environment(tmp_path), tmp_path)
    assert [(r.status, r.output) for r in results] == [(0, ""), (0, "1\nerr\n"), (1, "")]


def test_a_block_of_the_demo_commands_is_what_the_demos_fixture_ran() -> None:
    def block(body: str) -> Block:
        return Block("docs/x.md", 1, "bash", body)

    assert _demo_builds(block("curate demo judge-demo --kind judge  # a comment")) == {"judge-demo"}
    assert _demo_builds(block("\n".join(DEMO_COMMANDS.values()))) == set(DEMO_COMMANDS)
    assert _demo_builds(block("curate demo --kind story demo-workspace")) is None  # not what getting-started builds
    assert _demo_builds(block("curate demo demo-workspace\ncurate status")) is None
