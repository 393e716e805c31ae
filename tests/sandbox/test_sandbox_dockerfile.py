"""Offline Dockerfile rewriting and the FROM table (pure), and base-image tags (no daemon)."""

from __future__ import annotations

import pytest

from agentpost.errors import InputError
from agentpost.sandbox.dockerfile import (
    FROM_TABLE,
    DockerfileError,
    is_base,
    map_from,
    rewrite,
    split_target,
)
from agentpost.sandbox.images import (
    BASES,
    SUITES,
    base_tag,
    describe_table,
    load_from_table,
    parse_base,
    python_version,
    sources_list,
)

TAGS = {
    "python": "agentpost-base-python:aaa",
    "build": "agentpost-base-build:bbb",
    "python@trixie": "agentpost-base-python-trixie:ccc",
    "build@trixie": "agentpost-base-build-trixie:ddd",
}


@pytest.mark.parametrize(
    ("image", "base"),
    [
        # every FROM of the shared Terminal-Bench 2 set, Harbor's examples and TB1's adapters
        ("ubuntu:24.04", "python@trixie"),
        ("python:3.13-slim-bookworm", "python@trixie"),
        ("python:3.13-slim", "python@trixie"),
        ("debian:13.0-slim", "python@trixie"),
        ("python:3.10-slim-bookworm", "python"),
        ("python:3.11-slim", "python"),
        ("python:3.11", "python"),
        ("debian:bullseye-slim", "python@bullseye"),
        ("debian:bookworm-slim", "python"),
        ("buildpack-deps:jammy", "build"),
        ("ubuntu:22.04", "python"),
        ("python:3.9-slim", "python@bullseye"),
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "build@trixie; WORKDIR /app"),
    ],
)
def test_real_task_froms_map_onto_the_nearest_release(image, base):
    assert map_from(image, FROM_TABLE) == base
    name = split_target(base)[0]
    assert is_base(name)
    if image.startswith("python:3."):  # the Python asked for, or the nearest a release has
        asked = image.split(":")[1].split("-")[0]
        assert python_version(name) == {"3.10": "3.11", "3.12": "3.13"}.get(asked, asked)


def test_every_release_is_one_line_and_names_its_python():
    assert SUITES == {"bookworm": "3.11", "trixie": "3.13", "bullseye": "3.9"}
    assert len(BASES) == 3 * len(SUITES) and "python@bullseye" in BASES
    assert parse_base("python") == ("python", "bookworm")
    assert parse_base("build@trixie") == ("build", "trixie")
    assert parse_base("python", suite="bullseye") == ("python", "bullseye")
    assert base_tag("python", suite="trixie") == base_tag("python@trixie")
    assert base_tag("python@trixie").startswith("agentpost-base-python-trixie:")
    assert base_tag("python").startswith("agentpost-base-python:")  # bookworm's tags unchanged
    with pytest.raises(InputError, match="no Debian release"):
        base_tag("python@sid")
    text = sources_list("trixie", "http://deb.debian.org/debian")
    assert "trixie main" in text and "trixie-updates main" in text
    assert "debian-security trixie-security main" in text


def test_unservable_froms_say_why():
    with pytest.raises(DockerfileError, match="alpine:3.19.*musl"):
        map_from("alpine:3.19", FROM_TABLE)
    with pytest.raises(DockerfileError, match="nvidia/cuda:12.*NVIDIA"):
        map_from("nvidia/cuda:12.4.0-runtime", FROM_TABLE)
    with pytest.raises(DockerfileError, match="quay.io/x:1.*no offline base"):
        map_from("quay.io/x:1", FROM_TABLE)


def test_rewrite_maps_froms_keeps_stages_and_drops_ppas():
    text = (
        "FROM --platform=linux/amd64 python:3.11 AS builder\n"
        "RUN add-apt-repository -y ppa:deadsnakes/ppa && apt-get install -y python3.11\n"
        "FROM builder\n"
        "FROM ubuntu:24.04\n"
        "COPY --from=builder /x /x\n"
    )
    rw = rewrite(text, FROM_TABLE, TAGS)
    lines = rw.text.splitlines()
    assert lines[0] == "FROM agentpost-base-python:aaa AS builder"
    assert lines[1] == "RUN true && apt-get install -y python3.11"
    assert lines[2] == "FROM builder" and lines[3] == "FROM agentpost-base-python-trixie:ccc"
    assert rw.bases == ["python", "python@trixie"]
    assert any("ppa:deadsnakes/ppa cannot be served" in n for n in rw.notes)


def test_a_package_trixie_dropped_is_installed_as_what_it_pulled_in():
    text = (
        "FROM python:3.13-slim-bookworm\nRUN apt-get install -y \\\n"
        "    libgl1-mesa-glx libgl1-mesa-glx-dev \\\n    libglib2.0-0\n"
    )
    lines = rewrite(text, FROM_TABLE, TAGS).text.splitlines()
    assert lines[2] == "    libgl1 libglx-mesa0 libgl1-mesa-glx-dev \\"
    same = rewrite(text.replace("3.13-slim-bookworm", "3.11"), FROM_TABLE, TAGS)
    assert "libgl1-mesa-glx libgl1-mesa-glx-dev" in same.text  # bookworm still has it


def test_an_ubuntu_version_pin_is_served_by_the_debian_release_and_said():
    """TB2's overfull-hbox: ``FROM ubuntu:24.04`` + ``apt-get install texlive-latex-base=2023...``
    (Ubuntu's version: Debian never has it, the build failed); Debian's own pins stay."""
    text = (
        "FROM ubuntu:24.04\nRUN apt-get update && \\\n"
        "    apt-get install -y --no-install-recommends texlive-latex-base=2023.20240207-1 \\\n"
        "    gcc=4:13.2.0-7ubuntu1 && echo a=1 && pip install x==1.0\n"
        "ENV v=1\nRUN echo b=2\n"
    )
    rw = rewrite(text, FROM_TABLE, TAGS)
    lines = rw.text.splitlines()
    assert lines[2] == "    apt-get install -y --no-install-recommends texlive-latex-base \\"
    assert lines[3] == "    gcc && echo a=1 && pip install x==1.0"
    assert lines[4:] == ["ENV v=1", "RUN echo b=2"]
    assert "Ubuntu's texlive-latex-base=2023.20240207-1: this release's version" in rw.notes[1]
    debian = text.replace("ubuntu:24.04", "debian:13.0-slim")
    assert "texlive-latex-base=2023.20240207-1" in rewrite(debian, FROM_TABLE, TAGS).text


def test_rewrite_gives_back_the_mapped_images_workdir():
    """The t-bench base sets WORKDIR /app: a relative COPY must land there, not in /."""
    text = "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nCOPY x ./\n"
    lines = rewrite(text, FROM_TABLE, TAGS).text.splitlines()
    assert lines == ["FROM agentpost-base-build-trixie:ddd", "WORKDIR /app", "COPY x ./"]


def test_copy_from_the_uv_image_installs_that_uv_from_pypi():
    text = (
        "FROM ubuntu:24.04 as build\n"
        "COPY --from=ghcr.io/astral-sh/uv:0.8.14 /uv /uvx /bin/\n"
        "FROM ubuntu:24.04 AS target\n"
        "COPY --from=build /app/documents /app/documents\n"
    )
    lines = rewrite(text, FROM_TABLE, TAGS).text.splitlines()
    assert lines[0] == "FROM agentpost-base-python-trixie:ccc AS agentpost-uv-0-8-14"
    assert "'uv==0.8.14'" in lines[1] and "/opt/agentpost-uv/bin/uvx /" in lines[1]
    assert lines[3] == "COPY --from=agentpost-uv-0-8-14 /uv /uvx /bin/"
    assert lines[5] == "COPY --from=build /app/documents /app/documents"
    with pytest.raises(DockerfileError, match="COPY --from=quay.io/x:1"):
        rewrite("FROM ubuntu:24.04\nCOPY --from=quay.io/x:1 /a /a\n", FROM_TABLE, TAGS)


def test_from_table_overrides_come_first(tmp_path, monkeypatch):
    f = tmp_path / "from.toml"
    f.write_text('[from]\n"ubuntu:*" = "build"\n"alpine:*" = "my-local-alpine:1"\n')
    table = load_from_table(f)
    assert map_from("ubuntu:22.04", table) == "build"
    assert map_from("alpine:3.20", table) == "my-local-alpine:1"
    assert map_from("debian:12", table) == "python"
    assert not is_base("my-local-alpine:1") and is_base("build")
    monkeypatch.setenv("AGENTPOST_FROM_TABLE", str(f))
    assert load_from_table()["ubuntu:*"] == "build"
    assert describe_table(FROM_TABLE)[-1][1].startswith("unsupported")
    f.write_text("[from]\nubuntu = 3\n")
    with pytest.raises(InputError, match=r"\[from\]"):
        load_from_table(f)


def test_base_tags_are_content_hashes(monkeypatch, tmp_path):
    tag, python = base_tag("build"), base_tag("python")
    assert tag.startswith("agentpost-base-build:") and base_tag("build") == tag
    assert base_tag("minimal", mirror="http://other/debian") != base_tag("minimal")
    ca = tmp_path / "ca.crt"
    ca.write_text("another CA\n")
    monkeypatch.setenv("AGENTPOST_BUILD_CA", str(ca))
    assert base_tag("python") != python  # the CA bundle builds trust is part of the recipe
    assert base_tag("build") != tag  # a parent's change reaches its children
    with pytest.raises(InputError, match="no base image named"):
        base_tag("alpine")
