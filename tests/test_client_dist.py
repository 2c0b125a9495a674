"""The light client distribution (clients/python, ``mcp-governance-client``) and the service
distribution that maps the same package: what each installs, in fresh venvs.

The venv tests are slow (pip builds and installs); the first tests are cheap checks of the
project's own (editable) install.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

import mcp_governance
from tests.frameworks.envs import CLIENT_SRC, ROOT, client_env

SERVICE_DEPENDENCIES = ("fastapi", "uvicorn", "deepdiff", "jsonschema", "tomlkit", "starlette", "prometheus-client")
PIP_TIMEOUT = 900


def test_one_copy_the_service_imports_the_clients_package():
    import app.client
    import app.errors
    import app.xmltext

    assert Path(mcp_governance.__file__).resolve().parent == CLIENT_SRC / "mcp_governance"
    assert app.errors.tool_error is mcp_governance.tool_error
    assert app.client.GovernanceClient is mcp_governance.GovernanceClient
    assert app.xmltext.escape_text is mcp_governance.errors.escape_text
    assert not (ROOT / "app" / "errors.py").read_text().count("def ")  # a re-export, not a second copy


def test_the_versions_of_the_two_distributions_agree():
    import tomllib

    import app

    client = tomllib.loads((CLIENT_SRC / "pyproject.toml").read_text())["project"]["version"]
    service = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert client == service == mcp_governance.__version__ == app.__version__


def test_the_error_contract_loads_no_service_dependency_and_no_http_client():
    code = ("import sys; from mcp_governance import tool_error, parse_tool_error, ToolError; "
            "import json; print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], env=client_env(), capture_output=True, text=True,
                          timeout=60, check=True)
    loaded = {name.split(".")[0] for name in json.loads(done.stdout)}
    assert not loaded & {"fastapi", "uvicorn", "deepdiff", "jsonschema", "tomlkit", "app", "httpx", "mcp", "pydantic"}


def make_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    return where / "bin" / "python"


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def installed(python: Path) -> set[str]:
    listing = json.loads(pip(python, "list", "--format", "json").stdout)
    return {entry["name"].lower() for entry in listing}


APP_PROJECT = {
    "app/__init__.py": '"""A project of its own that happens to be called app."""\nNAME = "their app"\n',
    "app/server.py": textwrap.dedent('''
        from app import NAME
        from mcp_governance import ToolError, parse_tool_error, tool_error
        from mcp_governance.client import GovernanceClient

        result = tool_error("NOT_FOUND", "No invoice inv_9", details={"owner": NAME})
        info = parse_tool_error(result["content"][0]["text"])
        assert info is not None and info.details == {"owner": "their app"}
        assert issubclass(ToolError, Exception) and GovernanceClient.__module__ == "mcp_governance.client"
        print("ok", NAME)
    '''),
}


@pytest.mark.slow
def test_the_client_installs_alone_and_works_in_a_project_with_its_own_app(tmp_path: Path):
    python = make_venv(tmp_path / "venv")
    pip(python, "install", "--quiet", str(CLIENT_SRC))  # a regular (non-editable) install, as from the package index
    names = installed(python)
    assert {"mcp-governance-client", "httpx"} <= names
    assert not names & set(SERVICE_DEPENDENCIES) and "mcp-governance" not in names

    project = tmp_path / "project"
    for path, text in APP_PROJECT.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text, encoding="utf-8")
    done = subprocess.run([str(python), "-m", "app.server"], cwd=project, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok their app", done.stderr
    # The client's own modules, from site-packages, not from this repository.
    where = subprocess.run([str(python), "-c", "import mcp_governance.integrations as m; print(m.__file__)"],
                           cwd=project, capture_output=True, text=True, timeout=60, check=True).stdout
    assert "site-packages" in where and str(ROOT) not in where


@pytest.mark.slow
def test_both_wheels_hold_the_one_copy_where_it_belongs(tmp_path: Path):
    wheels = tmp_path / "wheels"
    for source in (ROOT, CLIENT_SRC):
        pip(Path(sys.executable), "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(source))
    [service] = wheels.glob("mcp_governance-*.whl")
    [client] = wheels.glob("mcp_governance_client-*.whl")
    service_files = set(zipfile.ZipFile(service).namelist())
    client_files = set(zipfile.ZipFile(client).namelist())
    client_package = {name for name in client_files if name.startswith("mcp_governance/")}
    assert "mcp_governance/errors.py" in client_package and "mcp_governance/py.typed" in client_package
    assert client_package <= service_files  # the service distribution maps the same package
    assert "app/cli/__init__.py" in service_files and not any(name.startswith("app/") for name in client_files)


@pytest.mark.slow
def test_the_service_installs_non_editable_with_the_client_inside(tmp_path: Path):
    python = make_venv(tmp_path / "venv")
    pip(python, "install", "--quiet", str(ROOT))
    names = installed(python)
    assert "mcp-governance" in names and "mcp-governance-client" not in names
    code = ("import app, mcp_governance, app.errors; "
            "assert app.errors.tool_error is mcp_governance.tool_error; print(mcp_governance.__file__)")
    done = subprocess.run([str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and "site-packages" in done.stdout, done.stderr
    cli = subprocess.run([str(tmp_path / "venv" / "bin" / "mcp-governance"), "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=False)
    assert cli.returncode == 0 and "lock" in cli.stdout
