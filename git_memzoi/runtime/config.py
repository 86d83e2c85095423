"""Config precedence: built-in, $MEMZOI_HOME/config.toml, the project's config.toml, .memzoi/config.toml.

Later files override earlier ones key by key. An unknown key, a bad value or a file that is
not TOML is reported with its file and key; nothing is silently ignored.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from git_memzoi.errors import ConfigError

_SECTION = ConfigDict(extra="forbid", strict=True, frozen=True)


class WorkflowConfig(BaseModel):
    model_config = _SECTION
    proposal_approval: Literal["manual", "auto"] = "manual"


class RetentionConfig(BaseModel):
    model_config = _SECTION
    session_lease_hours: float = Field(default=24.0, gt=0, le=168)


class RecallConfig(BaseModel):
    model_config = _SECTION
    search_limit: int = Field(default=10, ge=1, le=1000)
    context_budget: int = Field(default=800, ge=50, le=100_000)


class HooksConfig(BaseModel):
    model_config = _SECTION
    allow_in_place_edits: bool = False


class AgentsConfig(BaseModel):
    model_config = _SECTION
    #: what `agent hook claude` answers for a `risk` record: ask the user, deny the tool call,
    #: or only add the warning to the agent's context
    risk_decision: Literal["ask", "deny", "context"] = "ask"


class Config(BaseModel):
    model_config = _SECTION
    workflow: WorkflowConfig = WorkflowConfig()
    retention: RetentionConfig = RetentionConfig()
    recall: RecallConfig = RecallConfig()
    hooks: HooksConfig = HooksConfig()
    agents: AgentsConfig = AgentsConfig()


@dataclass(frozen=True)
class ConfigSource:
    """One config file's bytes and the name to report it by (a path, or `REV:.memzoi/config.toml`)."""

    name: str
    data: bytes | None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _parse(source: ConfigSource) -> dict[str, Any]:
    assert source.data is not None
    try:
        text = source.data.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{source.name}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source.name}: not valid TOML: {exc}") from None
    try:
        Config.model_validate(data)  # each file must be valid on its own, so errors name it
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"{source.name}: unknown key {key!r}") from None
        raise ConfigError(f"{source.name}: {key}: {err['msg']} (got {err.get('input')!r})") from None
    return data


def load(sources: list[ConfigSource]) -> Config:
    """Merge `sources` in precedence order (lowest first); missing files are skipped."""
    merged: dict[str, Any] = {}
    for source in sources:
        if source.data is not None:
            merged = _merge(merged, _parse(source))
    return Config.model_validate(merged)


def file_source(path: Path) -> ConfigSource:
    try:
        return ConfigSource(str(path), path.read_bytes())
    except FileNotFoundError:
        return ConfigSource(str(path), None)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
