"""The CLI as a user meets it: files in, files out, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from app.cli import main
from tests.conftest import CORPUS, fixture_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lock_writes_the_default_path_and_tomllib_parses_it(tmp_path, capsys):
    code, out, err = run(capsys, "lock", str(fixture_path("plain.json")), "--server", "billing",
                         "--lockfiles", str(tmp_path))
    assert code == 0 and out == ""
    target = tmp_path / "billing.lock.toml"
    assert "billing.lock.toml: written (2 tools" in err
    data = tomllib.loads(target.read_text(encoding="utf-8"))
    assert data["server"] == "billing"


def test_export_gives_back_every_schema_exactly(tmp_path, capsys, plain_json):
    lock = tmp_path / "billing.lock.toml"
    assert run(capsys, "lock", str(fixture_path("plain.json")), "-o", str(lock))[0] == 0
    code, out, _ = run(capsys, "export", str(lock))
    assert code == 0
    exported = json.loads(out)
    for tool in plain_json["tools"]:
        assert exported["tools"][tool["name"]]["input_schema"] == tool["inputSchema"]
    assert exported["tools"]["get_invoice"]["output_schema"]["properties"]["note"]["default"] is None
    code, out, _ = run(capsys, "export", str(lock), "--format", "toml")
    assert out == lock.read_text(encoding="utf-8")


def test_server_name_comes_from_the_input(tmp_path, capsys):
    code, _, _ = run(capsys, "lock", str(CORPUS / "time" / "2026.10.19.json"), "--lockfiles", str(tmp_path))
    assert code == 0
    assert (tmp_path / "time.lock.toml").is_file()


def test_no_server_name_anywhere_is_exit_2(tmp_path, capsys):
    surface = tmp_path / "tools.json"
    surface.write_text('{"tools": []}')
    code, _, err = run(capsys, "lock", str(surface), "--lockfiles", str(tmp_path))
    assert code == 2
    assert err.strip() == f"mcp-governance: error: {surface}: no server name in the input; pass --server NAME"


def test_stdout_output(capsys):
    code, out, _ = run(capsys, "lock", str(fixture_path("plain.json")), "-o", "-")
    assert code == 0 and tomllib.loads(out)["server"] == "billing"


def test_relocking_an_unchanged_surface_keeps_the_file(tmp_path, capsys):
    target = tmp_path / "b.lock.toml"
    run(capsys, "lock", str(fixture_path("plain.json")), "-o", str(target))
    before = target.read_bytes()
    code, _, err = run(capsys, "lock", str(fixture_path("plain.json")), "-o", str(target))
    assert code == 0 and "unchanged" in err
    assert target.read_bytes() == before


MALFORMED = {
    "no-schema.json": '{"tools": [{"name": "a"}]}',
    "dup.json": '[{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}]',
    "broken.json": '{"tools": [',
    "nan.json": '{"tools": [{"name": "a", "inputSchema": {"default": NaN}}]}',
    "array-schema.json": '{"tools": [{"name": "a", "inputSchema": []}]}',
    "future.json": '{"lockfile_version": 2, "server": "a"}',
    "fusion2.lock": '{"lockfileVersion": 2, "capabilities": {"tools": {}}}',
    "not.toml": "this is = not [valid",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_input_is_exit_2_one_line_nothing_written(tmp_path, capsys, name):
    source = tmp_path / name
    source.write_text(MALFORMED[name], encoding="utf-8")
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "lock", str(source), "--server", "x", "--lockfiles", str(out_dir))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"mcp-governance: error: {source}: ")
    assert "Traceback" not in err
    assert not out_dir.exists()


def test_unreadable_or_missing_file(tmp_path, capsys):
    code, _, err = run(capsys, "lock", str(tmp_path / "nope.json"), "--server", "x")
    assert code == 2 and "nope.json: no such file" in err
    code, _, err = run(capsys, "lock", str(tmp_path), "--server", "x")
    assert code == 2 and "is a directory" in err


def test_invalid_server_name_is_refused(capsys):
    code, _, err = run(capsys, "lock", str(fixture_path("plain.json")), "--server", "../../etc/passwd", "-o", "-")
    assert code == 2 and "not a valid server name" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["lock"])
    assert caught.value.code == 2


@pytest.mark.parametrize("command", [[], ["lock"], ["export"]])
def test_help_for_every_command(command):
    result = subprocess.run([sys.executable, "-m", "app", *command, "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "usage: mcp-governance" in result.stdout


def test_python_dash_m_and_stdin(tmp_path):
    data = Path(fixture_path("plain.json")).read_bytes()
    result = subprocess.run([sys.executable, "-m", "app", "lock", "-", "-o", "-"], input=data, capture_output=True)
    assert result.returncode == 0
    assert tomllib.loads(result.stdout.decode())["server"] == "billing"
    result = subprocess.run([sys.executable, "-m", "app", "lock", "-", "-o", "-"], input=b"{", capture_output=True)
    assert result.returncode == 2
    assert result.stderr.decode().startswith("mcp-governance: error: <stdin>: invalid JSON")
