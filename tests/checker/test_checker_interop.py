"""The paper's probe layouts: a replay of the three pairs and the full triplet; two providers, two keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from scripted_http import JsonHandler, serving
from typer.testing import CliRunner

from checker.backends import open_backend
from checker.backends.base import BackendError
from checker.check import check_workspace, load_probe_items
from checker.estimators import EstimatorConfig
from curation.config import CONFIG_NAME, ProbeSettings, Settings
from curation.errors import ValidationFailed
from omnicurate.cli.main import app

PAIRS_AND_FULL = ("text+image", "text+audio", "image+audio", "text+image+audio")
"""TRIAD §3.2: the pairs and the full triplet."""


def paper_layout_replay(path: Path, items, pair_samples) -> Path:  # type: ignore[no-untyped-def]
    lines = []
    for item in items:
        keys = list(item.options)
        for view in PAIRS_AND_FULL:
            samples = [item.answer] * 10 if view == "text+image+audio" else pair_samples(keys, item.answer)
            lines.append({"item": item.id, "view": view, "samples": samples})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_replay_of_pairs_and_full_judges_the_rest_as_unprobed(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = load_probe_items(demo_workspace)[:2]
    wide = paper_layout_replay(tmp_path / "wide.jsonl", items, lambda keys, _a: keys[:2] * 3)
    command = ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{wide}"]
    result = CliRunner().invoke(app, [*command, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    unprobed = ["none", "text", "image", "audio"]
    for record in document["items"]:
        assert record["verdict"] == "well_posed"  # Definition 1 over the four probed views
        assert record["unprobed"] == unprobed
        assert sorted(record["views"]) == sorted(PAIRS_AND_FULL)
    summary = document["summary"]
    assert summary["unprobed_views"] == dict.fromkeys(sorted(unprobed), 2)
    assert summary["reducible_share"]["text"] is None and summary["reducible_share"]["text+image"] == 0
    assert document["run"]["views_probed"] == 8
    text = CliRunner().invoke(app, command)
    assert text.exit_code == 0, text.output
    said = " ".join(text.stdout.split())  # rich wraps lines at the terminal's width
    assert "unprobed views (audio 2, image 2, none 2, text 2)" in said and "probed views only" in said

    # a pair that already narrows the options is found as it is with eight views
    narrow = paper_layout_replay(tmp_path / "narrow.jsonl", items, lambda _k, answer: [answer] * 6)
    result = CliRunner().invoke(app, ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{narrow}", "--json"])
    records = json.loads(result.stdout)["items"]
    assert [r["verdict"] for r in records] == ["reducible", "reducible"]
    assert records[0]["reducible_by"] == ["text+image", "text+audio", "image+audio"]


def test_a_recorded_partial_run_replays_and_a_replay_without_the_full_view_is_refused(  # type: ignore[no-untyped-def]
    demo_workspace, tmp_path: Path
) -> None:
    items = load_probe_items(demo_workspace)[:1]
    replay = paper_layout_replay(tmp_path / "run.jsonl", items, lambda keys, _a: keys[:2] * 3)
    recorded = tmp_path / "recorded.jsonl"
    base = ["-w", str(demo_workspace.root), "check"]
    first = CliRunner().invoke(app, [*base, "--probe", f"replay:{replay}", "--record", str(recorded), "--json"])
    assert first.exit_code == 0, first.output
    assert len(recorded.read_text().splitlines()) == 4
    again = CliRunner().invoke(app, [*base, "--probe", f"replay:{recorded}", "--json"])
    assert json.loads(again.stdout)["items"] == json.loads(first.stdout)["items"]

    lines = [line for line in replay.read_text().splitlines() if '"text+image+audio"' not in line]
    no_full = tmp_path / "no_full.jsonl"
    no_full.write_text("\n".join(lines) + "\n")
    refused = CliRunner().invoke(app, [*base, "--probe", f"replay:{no_full}"])
    assert refused.exit_code == 2
    assert items[0].id in refused.output and "at least its full view" in refused.output


class KeyedServer(ThreadingHTTPServer):
    key: str
    seen: list[str]


class KeyedHandler(JsonHandler):
    """Answers every request with its first allowed option, only when the bearer key is this server's."""

    server: KeyedServer

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        given = self.headers.get("Authorization", "")
        self.server.seen.append(given)
        if given != f"Bearer {self.server.key}":
            self.send_json({"error": "wrong key"}, status=401)
            return
        choice = body["structured_outputs"]["choice"][0]
        reply = {"choices": [{"message": {"content": choice}}] * body["n"], "usage": {"completion_tokens": body["n"]}}
        self.send_json(reply)


@pytest.fixture
def two_servers() -> Iterator[tuple[KeyedServer, KeyedServer]]:
    servers = []
    for key in ("key-of-provider-one", "key-of-provider-two"):
        httpd = KeyedServer(("127.0.0.1", 0), KeyedHandler)
        httpd.key, httpd.seen = key, []
        servers.append(httpd)
    with serving(*servers):
        yield servers[0], servers[1]


def url(server: KeyedServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_two_probes_with_two_keys_run_together(  # type: ignore[no-untyped-def]
    demo_workspace, two_servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = two_servers
    monkeypatch.setenv("PROVIDER_ONE_KEY", one.key)
    monkeypatch.setenv("PROVIDER_TWO_KEY", two.key)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    item = load_probe_items(demo_workspace)[0].id
    # one probe in a spec, the other from a [checker.probes] table
    path = demo_workspace.root / CONFIG_NAME
    settings = Settings.load(path)
    settings.checker.probes = {"second": ProbeSettings(spec=f"openai:{url(two)}#model-b", key_env="PROVIDER_TWO_KEY")}
    settings.save(path)
    assert "key-of-provider" not in path.read_text()
    first = f"openai:{url(one)}#model-a#key=PROVIDER_ONE_KEY"
    result = CliRunner().invoke(
        app, ["-w", str(demo_workspace.root), "check", "--probe", first, "--probe", "second", "--item", item, "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document["run"]["probes"]) == {first, "second"}
    assert document["run"]["views_probed"] == 16
    assert one.seen == [f"Bearer {one.key}"] * 8 and two.seen == [f"Bearer {two.key}"] * 8


def test_keys_are_named_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_EXPORTED_KEY", raising=False)
    with pytest.raises(BackendError, match="NOT_EXPORTED_KEY, which is not set"):
        open_backend("openai:http://127.0.0.1:9/v1#m#key=NOT_EXPORTED_KEY")
    with pytest.raises(BackendError, match="never the key itself") as pasted:
        open_backend("openai:http://127.0.0.1:9/v1#m#key=sk-proj-abc123")
    assert "sk-proj-abc123" not in str(pasted.value)
    with pytest.raises(BackendError, match="unknown openai backend flag"):
        open_backend("openai:http://127.0.0.1:9/v1#m#audio")
    monkeypatch.setenv("SOME_KEY", "k")
    backend = open_backend("openai:http://127.0.0.1:9/v1#m#no-audio#key=SOME_KEY")
    assert backend.audio_input is False and backend.model_id == "http://127.0.0.1:9/v1#m"
    toml = tmp_path / CONFIG_NAME
    toml.write_text('[checker.probes.gpt]\nspec = "openai:https://api.example/v1#gpt"\nkey = "sk-secret"\n')
    with pytest.raises(ValidationFailed) as written:
        Settings.load(toml)
    assert "a key never goes in curate.toml" in str(written.value.problems)


def test_check_workspace_union_of_two_keyed_probes_stores_one_verdict(  # type: ignore[no-untyped-def]
    demo_workspace, two_servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = two_servers
    monkeypatch.setenv("K1", one.key)
    monkeypatch.setenv("K2", two.key)
    probes = {
        name: open_backend(f"openai:{url(s)}#m#key={var}") for name, s, var in (("a", one, "K1"), ("b", two, "K2"))
    }
    ids = [load_probe_items(demo_workspace)[0].id]
    document, stats, _, results = check_workspace(demo_workspace, probes, EstimatorConfig(), ids=ids)
    assert stats.views_probed == 16 and len(results) == 1
    assert results[0].verdict == "reducible"  # both always answer the first option
    assert set(document["summary"]["by_probe"]) == {"a", "b"}


def test_two_replays_with_different_views_are_united_over_the_views_both_probed(  # type: ignore[no-untyped-def]
    demo_workspace, tmp_path: Path
) -> None:
    from checker.views import PROBE_VIEWS

    items = load_probe_items(demo_workspace)[:1]
    paper = paper_layout_replay(tmp_path / "paper.jsonl", items, lambda keys, _a: keys[:2] * 3)
    full = tmp_path / "full.jsonl"
    full.write_text(
        "".join(
            json.dumps({"item": items[0].id, "view": view, "samples": [items[0].answer] * 10}) + "\n"
            for view in PROBE_VIEWS
        )
    )
    command = ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{paper}", "--probe", f"replay:{full}"]
    result = CliRunner().invoke(app, [*command, "--json"])
    assert result.exit_code == 0, result.output
    (record,) = json.loads(result.stdout)["items"]
    assert record["unprobed"] == ["none", "text", "image", "audio"]  # the paper's file lacks them
    assert sorted(record["views"]) == sorted(PAIRS_AND_FULL)
    assert record["verdict"] == "well_posed"  # the pairs' union keeps two options each
