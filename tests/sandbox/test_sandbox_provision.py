"""What a task installs at run time, read from its scripts (pure): shell and Python alike, on the
shapes real Terminal-Bench 2 and Harbor tasks use."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from shared_data import require

from agentpost.sandbox import provision
from agentpost.sandbox.provision import (
    CONTEXT_DIR,
    RUNTIME_ENV,
    last_user,
    needs_json,
    provision_lines,
    read_needs,
    segment,
)

TB2_TEST = """#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx \\
  -p 3.13 \\
  -w pytest==8.4.1 \\
  -w numpy==2.3.3 \\
  -w pytest-json-ctrf==0.3.5 \\
  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
"""

SOLVE = """#!/bin/bash
set -euo pipefail
echo 'deb-src http://deb.debian.org/debian stable main' >> /etc/apt/sources.list.d/deb-src.list
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
    build-essential=12.12 \\
    libncurses-dev=6.5+20250216-2
apt-get source pmars
pip install --no-cache-dir 'numpy<2' scipy==1.16.0 && echo done
pip3 install numpy==2.3.2 python-chess==1.2.0 --break-system-packages
pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cpu
pip install git+https://github.com/x/y.git
python3.11 -m pip install -r requirements.txt six
uv pip install --system rich==13.0.0
npm install -g left-pad@1.3.0 --prefix /opt/x
"""

TEST_PY = '''
import subprocess
def test_deploy():
    open("verify.sh", "w").write("""
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y curl expect git openssh-client
""")
    subprocess.run(["pip", "install", "requests==2.32.4"], check=True)
    subprocess.run("apt-get -y install jq", shell=True)
'''

TB1_UV = "uv init\nuv add pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n"


def test_tb2_verifier_line_is_one_uvx_run_with_its_python():
    needs = read_needs({"tests/test.sh": TB2_TEST}).to_json()
    assert needs["uvx"] == [
        {
            "python": "3.13",
            "with": ["pytest==8.4.1", "numpy==2.3.3", "pytest-json-ctrf==0.3.5"],
            "from": "pytest",
            "tool": "pytest",
        }
    ]
    assert needs["apt"] == [[["curl"], True]] and needs["uv_version"] == "0.9.5"
    assert needs["pip"] == {} and needs["notes"] == []


def test_solution_installs_keep_pins_recommends_and_interpreter():
    needs = read_needs({"solution/solve.sh": SOLVE}).to_json()
    assert needs["apt"] == [[["build-essential=12.12", "libncurses-dev=6.5+20250216-2"], False]]
    assert needs["apt_source"] == ["pmars"]
    assert needs["pip"][""] == [
        "numpy<2",
        "numpy==2.3.2",
        "python-chess==1.2.0",
        "rich==13.0.0",
        "scipy==1.16.0",
        "torch==2.7.0",
    ]
    assert needs["pip"]["3.11"] == ["six"]  # requirements.txt is a file, not a package
    assert needs["npm"] == [[True, ["left-pad@1.3.0"]]]
    notes = " ".join(needs["notes"])
    assert "from PyPI, not from https://download.pytorch.org/whl/cpu" in notes
    assert "git+https://github.com/x/y.git is fetched from a URL" in notes


def test_commands_inside_python_strings_and_lists_are_read():
    needs = read_needs({"tests/test_outputs.py": TEST_PY}).to_json()
    assert [["curl", "expect", "git", "openssh-client"], True] in needs["apt"]
    assert [["jq"], True] in needs["apt"]
    assert needs["pip"][""] == ["requests==2.32.4"]


def test_uv_projects_are_replayed_and_prose_is_not_a_package():
    needs = read_needs({"run-tests.sh": TB1_UV}).to_json()
    assert needs["uv_projects"] == [["pytest==8.4.1"]] and needs["pip"] == {}
    prose = read_needs({"x.py": "# pip install it\nprint('to apt-get install 11 xz-utils')\n"})
    assert prose.to_json()["apt"] == [[["xz-utils"], True]]  # a number is no package
    assert read_needs({"a.sh": "pip install 11 ./local $PKG .\n"}).empty()


def test_downloads_from_other_hosts_are_named():
    text = (
        "wget https://www.povray.org/ftp/POVSRC.TAR.Z\n"
        "git clone --depth 1 https://github.com/x/y.git /app/y\n"
        "curl -sf http://localhost:8080/ > out\ncurl -LsSf https://astral.sh/uv/0.9.5/install.sh\n"
        "git clone git@CONTAINER_IP:/git/server\n"
    )
    py = 'tok = AutoTokenizer.from_pretrained("Qwen/Qwen2.5")\nurlopen("https://example.org/x")\n'
    assert read_needs({"s.py": py}).to_json()["notes"] == [
        "s.py: fetches from example.org (no registry here serves it)",
        "s.py: fetches from huggingface.co (from_pretrained; no registry here serves it)",
    ]
    notes = read_needs({"solution/solve.sh": text}).to_json()["notes"]
    assert notes == [
        "solution/solve.sh: fetches from github.com (no registry here serves it)",
        "solution/solve.sh: fetches from www.povray.org (no registry here serves it)",
    ]


def test_urls_a_python_http_client_fetches_are_named_in_any_form():
    """A URL held in a variable, in an f-string, or on the line after the call (a solution that
    asks web APIs at solve time) is named too, when the file uses an HTTP client."""
    py = (
        "import httpx\nAPI = 'https://api.example.net/v1'\n"
        "r = httpx.get(\n    f'https://data.example.com/entry/{key}', timeout=5\n)\n"
        "httpx.get(f'{API}/x')\nlocal = 'http://localhost:8000/'  # served\n"
    )
    assert read_needs({"solve.sh": py}).to_json()["notes"] == [
        "solve.sh: fetches from api.example.net (no registry here serves it)",
        "solve.sh: fetches from data.example.com (no registry here serves it)",
    ]
    plain = "print('see https://example.org/docs')\n"  # no HTTP client: a URL is only text
    assert read_needs({"t.py": plain}).to_json()["notes"] == []


def test_segment_stops_at_shell_operators_and_closing_quotes():
    assert segment(" -y a b && c") == ["-y", "a", "b"]
    assert segment(' a b")') == ["a", "b"]
    assert segment(" 'x<2' y | z") == ["x<2", "y"]
    assert segment(" a > /dev/null") == ["a"]


def test_provisioning_step_runs_the_helper_as_root_and_gives_the_user_back():
    needs = read_needs({"t.sh": TB2_TEST})
    lines = provision_lines(needs, user="agent").splitlines()
    assert lines[2] == "USER root" and lines[-1] == "USER agent"
    assert lines[3].startswith(f"COPY {CONTEXT_DIR} ")
    env = [ln for ln in lines if ln.startswith("ENV ")][0]
    for key in ("PIP_INDEX_URL", "UV_OFFLINE", "UV_CACHE_DIR", "npm_config_offline"):
        assert f"{key}={RUNTIME_ENV[key]}" in env
    assert json.loads(needs_json(needs))["uv_version"] == "0.9.5"
    assert last_user("FROM a\nUSER x\nFROM b\nRUN true\n") is None
    assert last_user("FROM a\nUSER x\nRUN y\nUSER agent\n") == "agent"


def test_r_packages_from_cran_are_named():
    """TB2's mcmc-sampling-stan installs rstan from CRAN at solve time (an R heredoc)."""
    r = (
        "Rscript -e \"install.packages('remotes', repos='https://cloud.r-project.org/')\"\n"
        "remotes::install_version('rstan', version='2.32.7', repos = c(\"https://cran.r-project.org\"))\n"
    )
    assert read_needs({"solve.sh": r}).to_json()["notes"] == [
        "solve.sh: fetches from cloud.r-project.org (no registry here serves it)",
        "solve.sh: fetches from cran.r-project.org (no registry here serves it)",
    ]


UV_PYTHONS = """#!/bin/bash
uv venv -p 3.12 .tb
uv venv --python 3.11 other
uv venv plain
uv run -p 3.10 pytest -q
uv run --python=3.9 --with pytest==8.4.1 pytest
uv pip install --python 3.12 rich==13.0.0
uvx -p 3.13 -w pytest==8.4.1 pytest
"""


def test_the_interpreters_uv_venv_run_and_pip_ask_are_read():
    """TB2's mailman runs ``uv venv -p 3.12`` (Ubuntu 24.04's Python): an interpreter the image
    must have, since uv may not download one offline. ``uvx -p`` is replayed at build (its own
    error names it), so it is not listed twice."""
    needs = read_needs({"tests/test.sh": UV_PYTHONS}).to_json()
    assert needs["pythons"] == [
        {"python": "3.12", "how": "uv venv -p 3.12", "where": "tests/test.sh"},
        {"python": "3.11", "how": "uv venv --python 3.11", "where": "tests/test.sh"},
        {"python": "3.10", "how": "uv run -p 3.10", "where": "tests/test.sh"},
        {"python": "3.9", "how": "uv run --python=3.9", "where": "tests/test.sh"},
        {"python": "3.12", "how": "uv pip install --python 3.12", "where": "tests/test.sh"},
    ]
    assert needs["pip"] == {"3.12": ["rich==13.0.0"], "3.9": ["pytest==8.4.1"]}


def test_mailmans_test_asks_python_312():
    test_sh = require() / "tasks" / "terminal-bench-2" / "mailman" / "tests" / "test.sh"
    needs = read_needs({"tests/test.sh": test_sh.read_text()}).to_json()
    assert {"python": "3.12", "how": "uv venv -p 3.12", "where": "tests/test.sh"} in needs[
        "pythons"
    ]


def test_the_image_helper_names_an_interpreter_it_lacks():
    """The build-time helper (stdlib only, run here on the host's Python): a minor version the
    image has is served; one it lacks is named with the command and file that ask it."""
    sys.path.insert(0, str(Path(provision.__file__).parent))
    try:
        import provision_image
    finally:
        sys.path.pop(0)
    have = provision_image.PY3
    report = {"unservable": [], "notes": []}
    provision_image.provision_pythons(
        {
            "pythons": [
                {"python": have, "how": f"uv venv -p {have}", "where": "tests/test.sh"},
                {"python": "3.99", "how": "uv venv -p 3.99", "where": "tests/test.sh"},
            ]
        },
        report,
    )
    [item] = report["unservable"]
    assert item["what"] == "Python 3.99 (uv venv -p 3.99)"
    assert item["why"].startswith("tests/test.sh asks Python 3.99 (uv venv -p 3.99); the image")
    assert have in item["why"].split("has Python ")[1].split(" only")[0]
    assert "uv cannot download interpreters offline" in item["why"]
    report = {"unservable": [], "notes": []}
    provision_image.provision_pythons({}, report)  # a needs.json written before this key
    assert report["unservable"] == []


def test_an_mteb_model_by_name_is_a_hub_download():
    """TB2's mteb-retrieve: ``mteb.get_model("BAAI/bge-small-zh-v1.5", revision=...)`` in a
    heredoc of solve.sh downloads the model from huggingface.co."""
    solve = (
        'cat << EOF > r.py\nimport mteb\nmodel = mteb.get_model("BAAI/bge-small-zh-v1.5")\nEOF\n'
    )
    assert read_needs({"solution/solve.sh": solve}).to_json()["notes"] == [
        "solution/solve.sh: fetches from huggingface.co (mteb.get_model; no registry here serves it)"
    ]
