"""agents/jsontext.add_members: what agent install adds goes in as text, and every byte that was there stays."""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from git_memzoi.agents.jsontext import add_members

OURS = {"command": "git", "args": ["memzoi", "mcp", "serve"]}


def _add_server(data: dict[str, Any]) -> None:
    data.setdefault("mcpServers", {})["memzoi"] = OURS


def _add_hook(data: dict[str, Any]) -> None:
    hooks = data.setdefault("hooks", {})
    hooks.setdefault("PreToolUse", []).append({"hooks": [{"command": "git memzoi agent hook claude"}]})
    hooks.setdefault("SessionStart", []).append({"hooks": [{"command": "git memzoi agent hook claude"}]})


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "{}\n",
        '{"mcpServers": {}}',
        '{"mcpServers": {"db": {"args": ["--ro", "x"]}}, "extra": [1, 2]}',
        '{\n\t"mcpServers": {\n\t\t"db": {"args": ["--ro"]}\n\t}\n}\n',
        '{\n    "a": "}{][\\"\\\\",\n    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}\n}',
        '  {  "hooks" : { "PreToolUse" : [ ] } , "x" : null }  \n',
        '{"a": 1, "b": {"c": 2}, "a": 3}',  # a repeated key: json reads the last
    ],
)
@pytest.mark.parametrize("change", [_add_server, _add_hook])
def test_only_our_text_is_inserted(text: str, change: Callable[[dict[str, Any]], None]) -> None:
    old = json.loads(text)
    new = copy.deepcopy(old)
    change(new)
    after = add_members(text, old, new)
    assert after is not None and json.loads(after) == new
    ops = [op for op in difflib.SequenceMatcher(None, text, after, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert all(op[0] == "insert" for op in ops), ops
    # an empty container gets its members on lines of their own, its closing bracket on a line after
    # them: only there may a piece that is not ours (a line break, an indent, and the bracket the
    # matcher pairs with one of ours instead) be inserted
    expands = re.search(r"[\[{]\s*[\]}]", text) is not None
    for _, _, _, start, end in ops:
        assert "memzoi" in after[start:end] or (expands and not after[start:end].strip(" \t\r\n}]")), after[start:end]


def test_more_than_an_addition_is_left_to_the_caller() -> None:
    text = '{"a": 1, "b": [1, 2]}'
    assert add_members(text, json.loads(text), {"a": 2, "b": [1, 2]}) is None
    assert add_members(text, json.loads(text), {"b": [1, 2]}) is None
    assert add_members(text, json.loads(text), {"a": 1, "b": [2, 1, 3]}) is None
