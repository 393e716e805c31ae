"""The offline apt repository of a task image: runs *inside* the image at build time, imported
by ``provision_image.py`` (the two travel together; see its docstring), with the command
helpers both use.

``provision_apt`` downloads every ``.deb`` each ``apt-get install`` of the task would fetch from
the image's own sources and state (recommends as the command asks) and each ``apt-get source``
package into ``/opt/agentpost/apt``, writes ``Packages``/``Sources``/``Release`` for it (a flat
repository, ``[trusted=yes]``), moves the image's sources to ``/opt/agentpost/apt/online-sources``
and points apt at the local repository only, with no retries (a source the agent adds later is
a warning, exit 0, as online). A pin the release lacks is served by the release's own version,
listed under the pinned version too (``write_repo``'s aliases).

Layer: io.
"""

import hashlib
import os
import re
import shutil
import subprocess
import time

APT = "/opt/agentpost/apt"
TIMEOUT = 1800


def run(argv, cwd=None, env=None, timeout=TIMEOUT):
    """(exit status, combined output) of ``argv``; never raises for a failing command."""
    full = dict(os.environ, DEBIAN_FRONTEND="noninteractive", **(env or {}))
    try:
        out = subprocess.run(
            argv, cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=timeout, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, f"{argv[0]}: {e}"
    return out.returncode, out.stdout.decode("utf-8", "replace")


def why(output, marks=("E:", "ERROR:", "error:", "npm ERR!", "npm error")):
    """The tool's own error lines (the last three), else its last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith(marks)]
    return " | ".join((errs or lines or ["(no output)"])[-3:])[:600]


def each(items, attempt):
    """Run ``attempt(items)``; if it fails, each item alone: the ones that fail, with why."""
    if not items:
        return []
    rc, out = attempt(items)
    if rc == 0:
        return []
    if len(items) == 1:
        return [(items[0], why(out))]
    failed = []
    for item in items:
        rc1, out1 = attempt([item])
        if rc1 != 0:
            failed.append((item, why(out1)))
    if not failed:  # each alone works, together they conflict
        failed = [(" ".join(items), why(out))]
    return failed


# --- apt -----------------------------------------------------------------------------------


def source_files():
    out = []
    if os.path.isfile("/etc/apt/sources.list"):
        out.append("/etc/apt/sources.list")
    d = "/etc/apt/sources.list.d"
    if os.path.isdir(d):
        out += [os.path.join(d, n) for n in sorted(os.listdir(d))]
    return out


def add_deb_src():
    """Temporary deb-src lines for every deb source (``apt-get source`` needs them)."""
    lines = []
    for path in source_files():
        text = open(path, encoding="utf-8", errors="replace").read()
        if path.endswith(".sources"):
            if re.search(r"^Types:.*\bdeb\b", text, re.M):
                new = re.sub(r"^Types:.*$", "Types: deb-src", text, flags=re.M)
                lines.append(("deb822", new))
        else:
            for ln in text.splitlines():
                if ln.strip().startswith("deb "):
                    lines.append(("list", "deb-src " + ln.strip()[4:]))
    with open("/etc/apt/sources.list.d/agentpost-src.list", "w") as f:
        f.write("\n".join(t for k, t in lines if k == "list") + "\n")
    with open("/etc/apt/sources.list.d/agentpost-src.sources", "w") as f:
        f.write("\n\n".join(t for k, t in lines if k == "deb822") + "\n")


def lists_present():
    d = "/var/lib/apt/lists"
    return os.path.isdir(d) and any(n not in ("lock", "partial", "auxfiles") for n in os.listdir(d))


def provision_apt(needs, report):
    if shutil.which("apt-get") is None:
        if needs["apt"] or needs["apt_source"]:
            report["unservable"].append({"what": "apt", "why": "the image has no apt-get"})
        return
    had_lists = lists_present()
    aliases = {}  # package -> pinned versions it is listed under as well
    pool, src = APT + "/pool", APT + "/src"
    for d in (pool + "/partial", src):
        os.makedirs(d, exist_ok=True)
    if needs["apt"] or needs["apt_source"]:
        if needs["apt_source"]:
            add_deb_src()
        rc, out = run(["apt-get", "update"])
        if rc != 0:
            report["unservable"].append({"what": "apt-get update", "why": why(out)})
        for pkgs, recommends in needs["apt"]:
            base = ["apt-get", "install", "--download-only", "-y", "-o",
                    "Dir::Cache::archives=" + pool]  # fmt: skip
            if not recommends:
                base.append("--no-install-recommends")
            for pkg, reason in each(pkgs, lambda items, base=base: run(base + items)):
                name, _, version = pkg.partition("=")
                if version and "was not found" in reason and alias_download(base, name, pool):
                    # a pin this release does not have (Ubuntu's build, a superseded point
                    # release): its own version of the package, listed under the pin too
                    aliases.setdefault(name, []).append(version)
                    report["substituted"].append(
                        {"what": "apt " + pkg, "served": candidate(name).strip(" ()")}
                    )
                    continue
                report["unservable"].append({"what": "apt " + pkg, "why": reason + candidate(pkg)})
        for pkg, reason in each(
            needs["apt_source"],
            lambda items: run(["apt-get", "source", "--download-only"] + items, cwd=src),
        ):
            report["unservable"].append({"what": "apt-get source " + pkg, "why": reason})
        for name in ("agentpost-src.list", "agentpost-src.sources"):
            path = "/etc/apt/sources.list.d/" + name
            if os.path.exists(path):
                os.unlink(path)
    shutil.rmtree(pool + "/partial", ignore_errors=True)
    for lock in (pool + "/lock",):
        if os.path.exists(lock):
            os.unlink(lock)
    n_debs, n_src = write_repo(pool, src, aliases)
    report["served"]["apt_debs"] = n_debs
    report["served"]["apt_sources"] = n_src
    go_offline(had_lists, n_src > 0, bool(aliases))


def alias_download(base, name, pool):
    """The release's own version of ``name`` (and what it needs) into the pool, even when the
    image has it installed already (a pin of it then reinstalls the same file)."""
    if run(base + [name])[0] != 0:
        return False
    rc, _ = run(["apt-get", "download", name], cwd=pool)
    return rc == 0


def candidate(pkg):
    """What the release has instead, for a pin or a name it lacks."""
    name = re.split(r"[=/]", pkg)[0]
    rc, out = run(["apt-cache", "policy", name])
    m = re.search(r"Candidate:\s*(\S+)", out)
    if rc == 0 and m and m.group(1) != "(none)":
        return f" (this release has {name} {m.group(1)})"
    return f" (this release has no package {name})"


def control(deb):
    rc, out = run(["dpkg-deb", "-f", deb])
    return out.strip() if rc == 0 else None


def sums(path):
    md5, sha = hashlib.md5(), hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            md5.update(block)
            sha.update(block)
    return md5.hexdigest(), sha.hexdigest(), os.path.getsize(path)


def dsc_fields(path):
    """The fields of a .dsc (its PGP armour dropped), continuation lines kept."""
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(
        r"-----BEGIN PGP SIGNED MESSAGE-----\n(?:Hash:.*\n)*\n(.*?)\n-----BEGIN PGP SIGNATURE",
        text,
        re.S,
    )
    body = m.group(1) if m else text
    fields, key = [], None
    for ln in body.splitlines():
        if ln[:1] in (" ", "\t") and key:
            fields[-1][1] += "\n" + ln
        elif ":" in ln:
            key, _, value = ln.partition(":")
            fields.append([key, value.strip()])
    return fields


def write_repo(pool, src, aliases):
    """Packages, Sources and Release of the flat repository in ``APT``; a package in
    ``aliases`` is listed once more under each pinned version (the same file)."""
    stanzas = []
    for name in sorted(os.listdir(pool)):
        if name.endswith(".deb"):
            ctl = control(os.path.join(pool, name))
            if ctl:
                md5, sha, size = sums(os.path.join(pool, name))
                tail = f"Filename: pool/{name}\nSize: {size}\nMD5sum: {md5}\nSHA256: {sha}\n"
                stanzas.append(f"{ctl}\n{tail}")
                m = re.search(r"^Package:\s*(\S+)", ctl, re.M)
                for version in aliases.get(m.group(1) if m else "", []):
                    alias = re.sub(r"^Version:.*$", "Version: " + version, ctl, flags=re.M)
                    stanzas.append(f"{alias}\n{tail}")
    sources = []
    for name in sorted(os.listdir(src)):
        if not name.endswith(".dsc"):
            continue
        fields = dsc_fields(os.path.join(src, name))
        get = dict(fields)
        md5, sha, size = sums(os.path.join(src, name))
        files = [f"{md5} {size} {name}"]
        shas = [f"{sha} {size} {name}"]
        for ln in get.get("Files", "").splitlines():
            parts = ln.split()
            if len(parts) == 3:
                files.append(" ".join(parts))
        for ln in get.get("Checksums-Sha256", "").splitlines():
            parts = ln.split()
            if len(parts) == 3:
                shas.append(" ".join(parts))
        out = ["Package: " + get.get("Source", name.split("_")[0])]
        for key, value in fields:
            if key not in ("Source", "Files", "Checksums-Sha256", "Checksums-Sha1"):
                out.append(f"{key}: {value}")
        out.append("Directory: src")
        out.append("Files:\n " + "\n ".join(files))
        out.append("Checksums-Sha256:\n " + "\n ".join(shas))
        sources.append("\n".join(out) + "\n")
    with open(APT + "/Packages", "w") as f:
        f.write("\n".join(stanzas))
    with open(APT + "/Sources", "w") as f:
        f.write("\n".join(sources))
    release = [
        "Origin: agentpost",
        "Label: agentpost offline",
        "Date: " + time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime()),
        "SHA256:",
    ]
    for name in ("Packages", "Sources"):
        _, sha, size = sums(APT + "/" + name)
        release.append(f" {sha} {size} {name}")
    with open(APT + "/Release", "w") as f:
        f.write("\n".join(release) + "\n")
    return len(stanzas), len(sources)


def go_offline(had_lists, with_sources, aliases):
    """Point apt at the local repository only; leave the lists as the image had them. With
    aliases, a pin below the installed version is allowed (it reinstalls the same file)."""
    keep = APT + "/online-sources"
    os.makedirs(keep, exist_ok=True)
    for path in source_files():
        shutil.move(path, os.path.join(keep, os.path.basename(path)))
    line = f"deb [trusted=yes] file:{APT} ./\n"
    if with_sources:
        line += f"deb-src [trusted=yes] file:{APT} ./\n"
    with open("/etc/apt/sources.list", "w") as f:
        f.write(line)
    os.makedirs("/etc/apt/apt.conf.d", exist_ok=True)
    with open("/etc/apt/apt.conf.d/99agentpost-offline", "w") as f:
        f.write('Acquire::Retries "0";\nAcquire::Languages "none";\n')
        if aliases:
            f.write('APT::Get::allow-downgrades "true";\n')
    if had_lists:
        run(["apt-get", "update"])
    else:
        shutil.rmtree("/var/lib/apt/lists", ignore_errors=True)
        os.makedirs("/var/lib/apt/lists/partial", exist_ok=True)


# --- pip, uv, npm --------------------------------------------------------------------------
