"""Safe YAML for memory files: PyYAML's parser under the profile's rules, and its dumper.

Safe YAML only (the C parser where present), no anchors or aliases, no duplicate keys, no
merge keys, timestamps kept as the strings the file holds. profile.frontmatter imports this
module only when a file's frontmatter is parsed, rendered or located: a check that refuses a
file by its size, or never reads one, does not load PyYAML.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from git_memzoi.errors import FormatError

try:  # the C parser is an order of magnitude faster; the pure one behaves the same
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)


_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_MAX = 65536


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1 resolution without the timestamp rule: timestamps stay exact strings."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # With no path resolvers a plain scalar's tag depends on its text alone, so it is memoised:
        # keys and common values repeat in every file.
        if kind is yaml.ScalarNode and implicit[0]:
            tag = _PLAIN_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]  # untyped in the stubs
                if len(value) <= 128 and len(_PLAIN_TAGS) < _PLAIN_TAGS_MAX:
                    _PLAIN_TAGS[value] = tag
            return tag
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers: nothing to track (the base class returns at once too)."""

    def ascend_resolver(self) -> None:
        """No path resolvers: nothing to track."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in rules if tag != "tag:yaml.org,2002:timestamp"]
    for first, rules in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}


_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that refuses duplicate keys, non-string keys and merge keys."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # Strings, lists and mappings are built directly (anchors and aliases never get this far,
        # so no node is shared and there is nothing to memoise); other tags take the usual route.
        tag, kind = node.tag, node.__class__
        if tag == _STR_TAG and kind is yaml.ScalarNode:
            return node.value
        if tag == _MAP_TAG and kind is yaml.MappingNode:
            return self.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        if tag == _SEQ_TAG and kind is yaml.SequenceNode:
            return [self.construct_object(child, True) for child in node.value]
        if kind is not yaml.ScalarNode:
            return super().construct_object(node, deep=deep)
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, LookupError, ArithmeticError, TypeError):
            # PyYAML's int, float and bool constructors trust the resolver's pattern (`0x_`, a
            # 5,000-digit integer) or an explicit tag (`!!bool maybe`, `!!int abc`) and then fail
            # with a bare Python exception: that is a fault of this one value, so say where it is.
            raise _Located("yaml-value", f"{_short(node.value)!r} is not a valid {_tag_name(tag)}", node) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # One pass: every key is a plain string scalar (so there is no merge key to flatten and the
        # key constructs to its own text), checked for duplicates before its value is built.
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=True)
        mapping: dict[Any, Any] = {}
        construct = self.construct_object
        for key_node, value_node in node.value:
            if key_node.tag != _STR_TAG or not isinstance(key_node, yaml.ScalarNode):
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise _Located("yaml-merge-key", "YAML merge keys (<<) are not allowed", key_node)
                raise _Located("yaml-key", "mapping keys must be plain strings", key_node)
            key = key_node.value
            if key in mapping:
                raise _Located("yaml-duplicate-key", f"duplicate key {key!r}", key_node)
            mapping[key] = construct(value_node, deep=True)
        return mapping


_Constructor.add_constructor(
    "tag:yaml.org,2002:timestamp",  # type: ignore[type-var]
    _Constructor.construct_yaml_str,
)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _tag_name(tag: str) -> str:
    return tag.rsplit(":", 1)[-1] if tag.startswith("tag:yaml.org,2002:") else tag


class _Loader(_Parser, _Constructor, _Resolver):
    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


class _Located(Exception):
    def __init__(self, code: str, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = node.start_mark.line


# A gate, not a judge: text that cannot hold an anchor or alias skips the exact event scan.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,:?-])[&*][^\s,\]}]", re.MULTILINE)


def load(front: str, path: str) -> Any:
    """Frontmatter text (without fences) as the data it holds; every problem is a FormatError with a line."""
    if ("&" in front or "*" in front) and _MAYBE_ANCHOR.search(front):
        _refuse_anchors(front, path)
    loader = _Loader(front)
    try:
        return loader.get_single_data()
    except _Located as exc:
        raise FormatError(exc.code, exc.message, path=path, line=exc.line + 2) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else 2
        problem = exc.problem or exc.context or "invalid YAML"
        raise FormatError("yaml-syntax", _one_line(f"YAML: {problem}"), path=path, line=line) from None
    except yaml.reader.ReaderError as exc:
        line = front[: exc.position].count("\n") + 2
        raise FormatError(
            "yaml-syntax", f"YAML: control character {exc.character!r} is not allowed", path=path, line=line
        ) from None
    except yaml.YAMLError as exc:
        raise FormatError("yaml-syntax", _one_line(f"YAML: {exc}"), path=path, line=2) from None
    except RecursionError:
        raise FormatError("yaml-too-deep", "frontmatter nests too deeply", path=path, line=2) from None
    finally:
        loader.dispose()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _refuse_anchors(front: str, path: str) -> None:
    try:
        for event in yaml.parse(front, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = event.start_mark.line + 2 if event.start_mark is not None else 2
                raise FormatError(
                    "yaml-alias", "YAML anchors and aliases are not allowed in memory files", path=path, line=line
                )
    except yaml.YAMLError:
        return  # not YAML at all: the full load that follows reports where and why


def field_lines(front: str) -> dict[tuple[Any, ...], int]:
    """Map each field path (('retention', 'occurred_at'), ('tags', 0)) to its 1-based file line."""
    lines: dict[tuple[Any, ...], int] = {}
    try:
        root = yaml.compose(front, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines

    def walk(node: yaml.Node, prefix: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                loc = (*prefix, key.value)
                lines.setdefault(loc, key.start_mark.line + 2)
                walk(value, loc)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                loc = (*prefix, index)
                lines.setdefault(loc, item.start_mark.line + 2)
                walk(item, loc)

    if root is not None:
        walk(root, ())
    return lines


class _Dumper(yaml.SafeDumper):
    """SafeDumper that double-quotes strings holding characters YAML would fold as line breaks."""


_FOLDED = re.compile(r"[\x85\u2028\u2029\r\t]|[^\S\n ]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _FOLDED.search(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def dump(data: dict[str, Any]) -> str:
    """`data` as block-style YAML, key order kept, every string on one line."""
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000
    )
