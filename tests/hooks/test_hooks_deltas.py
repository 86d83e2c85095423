"""Trees kept as deltas of a kept summary: the server parses no accepted file twice; a cache changes no verdict."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path

import pytest

from git_memzoi.gitrepo import open_repo
from git_memzoi.gitrepo.history import FileEntry, History
from git_memzoi.hooks.checks import KEEP_AFTER, MemoryChecker
from git_memzoi.hooks.run import check_server_push, keep_tree, parse_pre_receive
from git_memzoi.hooks.treecache import DELTA_FORMAT, FORMAT, KEEP, TreeCache
from git_memzoi.hooks.treestate import Kept, TreeState
from git_memzoi.layout import MAX_FILE_BYTES
from git_memzoi.profile.tree import Facts
from git_memzoi.runtime.home import Layout
from support import Repo, git, run_importtime
from support.hooks import Remote, record, record_path

pytestmark = pytest.mark.slow


def kept_trees(remote: Remote) -> Path:
    return Layout.for_repo(open_repo(remote.bare)).hook_trees


def headers(folder: Path) -> dict[str, list[str]]:
    """Each kept tree's header: format, validator, tree, (a delta's base and the base's digest,) digest."""
    return {path.stem: json.loads(path.read_bytes().partition(b"\n")[0]) for path in folder.glob("*.tree")}


def memzoi_tree(remote: Remote, rev: str = "main") -> str:
    return git("rev-parse", f"{rev}:.memzoi", cwd=remote.bare).stdout.strip()


def server_check(remote: Remote, old: str, new: str) -> tuple[list[str], int]:
    """pre-receive's findings for moving main from `old` to `new`, and how many files it parsed."""
    report = check_server_push(open_repo(remote.bare), parse_pre_receive(f"{old} {new} refs/heads/main\n"))
    return [str(f.problem) for f in report.findings], report.files_parsed


def push_records(remote: Remote, *ids: str) -> str:
    """Push one commit adding a record for each ID (accepted); the tree it lands."""
    remote.commit({record_path(rid): record(rid) for rid in ids}, f"add {len(ids)} records")
    remote.accepted()
    return memzoi_tree(remote)


def test_a_push_refused_by_size_after_accepted_ones_parses_nothing_they_brought(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Push A (kept whole), B (kept as a delta of A), C refused by size: C reads B's records from the delta."""
    folder = kept_trees(remote)
    a = memzoi_tree(remote)
    assert headers(folder)[a][0] == FORMAT  # the first push is validated from nothing: kept whole
    b = push_records(remote, "use-redis", "use-kafka")
    delta = headers(folder)[b]
    assert delta[0] == DELTA_FORMAT and delta[3] == a and delta[4] == headers(folder)[a][3]
    assert (folder / f"{b}.tree").stat().st_size < 2000  # two records' rows, not the tree's

    old = remote.refs()["refs/heads/main"]
    new = remote.commit_zeros(".memzoi/records/project/zeros.md", 2 * MAX_FILE_BYTES)
    remote.deliver(new)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    proc, modules = run_importtime(["hook", "pre-receive", "--json"], remote.bare, f"{old} {new} refs/heads/main\n")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert [p["code"] for p in json.loads(proc.stdout)["problems"]] == ["file-too-large"]
    assert "git_memzoi.hooks.run" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in ("yaml", "pydantic", "pydantic_core"))
    assert heavy == [], heavy[:5]  # no file parsed: B's records came from the delta, zeros.md refused by size
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before  # a refused push keeps nothing

    found, checked = server_check(remote, old, new)
    assert checked == 1 and [f.split(": ")[1] for f in found] == ["file-too-large"]  # zeros.md alone, by its size
    with monkeypatch.context() as empty:
        empty.setenv("MEMZOI_HOME", str(tmp_path / "empty-home"))
        every = len(git("ls-tree", "-r", "--name-only", new, ".memzoi", cwd=remote.bare).stdout.split())
        assert server_check(remote, old, new) == (found, every)  # the same verdict from nothing, every file read
    remote.rejected("file-too-large")


def test_a_delta_holds_at_most_keep_after_files_then_the_tree_is_kept_whole(remote: Remote) -> None:
    folder = kept_trees(remote)
    a = memzoi_tree(remote)
    b = push_records(remote, *(f"r{n:02d}" for n in range(KEEP_AFTER - 2)))
    assert headers(folder)[b][0] == DELTA_FORMAT and headers(folder)[b][3] == a
    c = push_records(remote, "one-more")  # KEEP_AFTER - 1 files away from A: still a delta of A
    assert headers(folder)[c][0] == DELTA_FORMAT and headers(folder)[c][3] == a
    assert len(json.loads((folder / f"{c}.tree").read_bytes().partition(b"\n")[2])["paths"]) == KEEP_AFTER - 1
    d = push_records(remote, "and-another")  # KEEP_AFTER away: kept whole
    assert headers(folder)[d][0] == FORMAT
    e = push_records(remote, "after-that")
    assert headers(folder)[e][0] == DELTA_FORMAT and headers(folder)[e][3] == d  # deltas now start from D
    old = remote.refs()["refs/heads/main"]
    remote.commit({record_path("dup"): record("r07")}, "a duplicate ID")
    new = git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()
    remote.deliver(new)
    found, parsed = server_check(remote, old, new)
    assert parsed == 2  # dup.md, and r07 for the line of its ID (a delta keeps facts, not lines)
    assert [f.split(": ")[1] for f in found] == ["id-duplicate"]


def test_deltas_count_in_pruning_and_a_pruned_base_makes_them_misses(tmp_path: Path) -> None:
    cache = TreeCache(tmp_path)
    state = TreeState()
    assert cache.save("base", state)
    state.kept_as("base")
    state.apply([(".memzoi/log.md", FileEntry("b" * 40, False), TreeState.rows_of(_one_row())[".memzoi/log.md"][1])])
    for n in range(KEEP - 1):
        assert cache.save_delta(f"t{n:02d}", state)
        os.utime(tmp_path / f"t{n:02d}.tree", (1000 + n, 1000 + n))
    os.utime(tmp_path / "base.tree", (10, 10))  # the oldest, yet kept: KEEP files in all
    assert len(list(tmp_path.glob("*.tree"))) == KEEP
    found = cache.start("t00")
    assert found is not None and found.tree == "base" and set(found.rows) == {".memzoi/log.md"}
    assert cache.save_delta("fresh", state)  # reading t00 made it and its base recent: t01, the oldest, goes
    assert not cache.has("t01") and cache.has("base") and len(list(tmp_path.glob("*.tree"))) == KEEP
    os.utime(tmp_path / "base.tree", (10, 10))
    assert cache.save_delta("newer", state)  # now the base is the oldest: pruned
    assert not cache.has("base") and cache.has("t00")
    assert cache.start("t00") is None and cache.start("newer") is None  # deltas of a pruned base: misses
    assert not cache.save_delta("orphan", state)  # no base to be a delta of


def _one_row() -> dict[str, object]:
    return {"paths": [".memzoi/log.md"], "oids": ["b" * 40], "symlinks": [], "facts": {}, "problems": {}}


DAMAGES = ("digest", "rebase", "chain", "unbase", "base-changed", "rows", "stray-rows")


def damage(folder: Path, how: str, delta: str, first: str) -> None:
    """Damage the delta kept for tree `delta` so that, read as it is, it would say something else.

    "digest": its body edited, the header left; "rebase": its header names `first` (kept whole
    too) as its base; "chain": it names itself, a delta, as its base; "unbase": its base deleted
    (pruned); "base-changed": its base's database edited (an ID changed) and its checksum recomputed;
    "rows": its rows say its record holds another ID in another blob (digest recomputed);
    "stray-rows": a row for a file the tree does not hold (digest recomputed).
    """
    path = folder / f"{delta}.tree"
    header, body = _split(path)
    base = folder / f"{header[3]}.tree"
    if how == "digest":
        path.write_bytes(json.dumps(header).encode() + b"\n" + body.replace(b'"use-kafka"', b'"use-postgres"'))
    elif how in ("rebase", "chain"):
        header[3] = first if how == "rebase" else delta
        path.write_bytes(json.dumps(header).encode() + b"\n" + body)
    elif how == "unbase":
        base.unlink()
    elif how == "base-changed":  # its database rewritten, an ID changed, its header's checksum recomputed
        database = base.with_suffix(".db")
        data = database.read_bytes().replace(b"use-postgres", b"use-postgrex")
        database.write_bytes(data)
        base_header, base_body = _split(base)
        base_header[3] = f"{zlib.crc32(data):08x}-{len(data)}"
        _write(base, base_header, base_body)
    else:
        data = json.loads(body)
        if how == "rows":
            data["oids"] = ["0" * 40 for _ in data["oids"]]
            for row in data["facts"].values():
                row[1] = "use-postgres"
        else:
            stray = record_path("stray")
            data["paths"].append(stray)
            data["oids"].append("1" * 40)
            data["facts"][stray] = ["record", "use-redis", None, False, [], None]
        _write(path, header, json.dumps(data).encode())


def _split(path: Path) -> tuple[list[str], bytes]:
    head, _, body = path.read_bytes().partition(b"\n")
    return json.loads(head), body


def _write(path: Path, header: list[str], body: bytes) -> None:
    header[-1] = hashlib.sha256(body).hexdigest()
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_or_mismatched_delta_never_changes_a_verdict(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    folder = kept_trees(remote)
    first = memzoi_tree(remote)
    other = push_records(remote, "use-redis")
    assert keep_tree(open_repo(remote.bare), "main") is not None  # `other`, kept whole
    delta = push_records(remote, "use-kafka")
    assert headers(folder)[delta][:4] == [DELTA_FORMAT, headers(folder)[other][1], delta, other]
    assert headers(folder)[first][0] == headers(folder)[other][0] == FORMAT
    old = remote.refs()["refs/heads/main"]
    # a duplicate of use-kafka's ID (kept as a delta row), and a record that supersedes use-redis
    remote.commit(
        {
            record_path("dup"): record("use-kafka"),
            record_path("next"): record("next", extra="supersedes: use-redis\n"),
        },
        "more",
    )
    new = git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()
    remote.deliver(new)
    expected, parsed = server_check(remote, old, new)
    assert [f.split(": ")[1] for f in expected] == ["id-duplicate"] and parsed == 3  # dup, next, use-kafka's line
    with monkeypatch.context() as empty:
        empty.setenv("MEMZOI_HOME", str(tmp_path / "empty-home"))
        assert server_check(remote, old, new)[0] == expected
    damage(folder, how, delta, first)
    assert server_check(remote, old, new)[0] == expected, how


def test_a_delta_whose_base_this_repository_lacks_is_a_miss(repo: Repo, tmp_path: Path) -> None:
    """A delta copied from another repository, of a tree this one never held: the tree is validated from scratch."""
    repo.write(record_path("alpha"), record("alpha"))
    repo.write(record_path("dup"), record("alpha"))
    history = History(open_repo(repo.path))
    tree = history.memzoi_of(repo.commit("two records, one ID"))
    assert tree is not None
    cache = TreeCache(tmp_path / "kept")
    absent = "f" * 40
    state = TreeState()
    assert cache.save(absent, state)
    state.kept_as(absent)
    # rows for every file of the tree, all saying alpha's ID is another: read over the wrong base, no duplicate
    listing = history.listing(tree)
    state.apply((path, entry, Kept(Facts("record", path), [])) for path, entry in listing.items())
    assert cache.save_delta(tree, state) and cache.start(tree) is not None
    errors = MemoryChecker(history, [], cache).tree_errors(tree)
    assert [p.code for p in errors] == ["id-duplicate"]
