"""The stdio MCP server on the official SDK: read-only tools, record resources and prompts over this worktree's memory.

Tools are registered as coroutines that call recall directly, so every call runs on the event
loop's thread, one at a time, over the same warm index. Failures come back as MCP tool errors
(`isError`), never as a crash of the server.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, create_model

from git_memzoi import __version__
from git_memzoi.errors import MemzoiError, NotFound, from_environment
from git_memzoi.mcp.tools import RECORD_URI_TEMPLATE, MemoryTools, ToolOutput
from git_memzoi.profile.vocab import Lane, MemoryType
from git_memzoi.recall.models import ContextPack, ExpiryDecision, Handoff, Model, PrecheckResult, SearchResult
from git_memzoi.runtime.workspace import Workspace

log = logging.getLogger("git_memzoi.mcp")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = """\
Reviewed project memory of this git repository (git memzoi), read-only.
Search it before changing code you do not know, build a context pack at the start of a task,
and precheck a path, command or action before risky work: warnings cite the record that
raised them. No tool here can propose, approve, apply, reject or edit memory. To add what you
learned for a person to review, run in a terminal:
  git memzoi propose --type convention --title "..." --body "..." --source agent --packet
To keep a private note for yourself (never in the repository): git memzoi local add --title "..." --body "...".
Private local memory is left out unless a tool's include_local argument asks for it. Each current,
non-private record is also a resource, memzoi://records/<concept-id>, holding its file."""

MAX_LIMIT = 200


def _pydantic_type(tp: Any) -> Any:
    """`tp` with every recall model in it replaced by its pydantic twin."""
    if isinstance(tp, type) and issubclass(tp, Model):
        return output_model(tp)
    origin = get_origin(tp)
    if origin is None or origin is Literal:
        return tp
    args = tuple(_pydantic_type(arg) for arg in get_args(tp))
    if origin in (Union, types.UnionType):
        return Union[args]  # noqa: UP007  (a union of a tuple of types made at run time)
    return origin[args]


_OUTPUT_MODELS: dict[type, type[BaseModel]] = {}


def output_model(cls: type[Model]) -> type[BaseModel]:
    """A pydantic model with `cls`'s fields, defaults and docstring: the tool's output schema.

    Recall returns plain models (the read path never imports pydantic); the schema clients see
    stays the one the SDK derives from a model.
    """
    if cls in _OUTPUT_MODELS:  # one model per class, so nested ones are shared
        return _OUTPUT_MODELS[cls]
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {}
    for name in cls.model_fields_order:
        kind = _pydantic_type(hints[name])
        fields[name] = (kind, cls._defaults[name]) if name in cls._defaults else (kind, ...)
    doc = cls.__doc__
    model: type[BaseModel] = create_model(cls.__name__, __doc__=doc, __config__=ConfigDict(frozen=True), **fields)
    _OUTPUT_MODELS[cls] = model
    return model


SearchOutput = output_model(SearchResult)
ContextOutput = output_model(ContextPack)
PrecheckOutput = output_model(PrecheckResult)
ExpiryOutput = output_model(ExpiryDecision)
HandoffOutput = output_model(Handoff)


def _run(call: Callable[[], ToolOutput]) -> CallToolResult:
    """Run one tool call; turn its result into text plus structured content, and failures into tool errors."""
    try:
        out = call()
    except MemzoiError as exc:
        message = str(exc) if not exc.hint else f"{exc} (hint: {exc.hint})"
        raise ToolError(message) from exc
    except Exception as exc:  # a failed call must not take the server down
        known = from_environment(exc)
        if known is not None:
            raise ToolError(f"{known} (hint: {known.hint})") from exc
        log.exception("tool call failed")
        raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from exc
    return CallToolResult(
        content=[TextContent(type="text", text=out.text)], structured_content=out.model.model_dump(mode="json")
    )


RECORD_MIME = "text/markdown"


class MemoryServer(MCPServer):
    """An MCPServer whose resource list is the records current at each request, not a list fixed at start."""

    def __init__(self, tools: MemoryTools) -> None:
        super().__init__("git-memzoi", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        self.tools = tools

    async def list_resources(self) -> list[Resource]:
        fixed = await super().list_resources()
        try:
            records = self.tools.record_resources()
        except MemzoiError as exc:
            raise ResourceError(str(exc)) from exc
        return fixed + [
            Resource(uri=r.uri, name=r.concept_id, title=r.title, description=r.description, mime_type=RECORD_MIME)
            for r in records
        ]


def _read_record(tools: MemoryTools, concept_id: str) -> str:
    try:
        return tools.read_record(concept_id)
    except NotFound as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    except MemzoiError as exc:
        raise ResourceError(str(exc)) from exc


def _prompt_text(call: Callable[[], ToolOutput]) -> str:
    try:
        return call().text
    except MemzoiError as exc:
        raise ValueError(str(exc)) from exc


def build_server(tools: MemoryTools) -> MCPServer:
    """An MCPServer with the seven tools, the record resources and two prompts bound to `tools`."""
    app = MemoryServer(tools)

    @app.resource(
        RECORD_URI_TEMPLATE,
        name="record",
        title="Memory record",
        mime_type=RECORD_MIME,
        description="A current, non-private memory record of this repository: its file, byte for byte.",
    )
    async def record(concept_id: str) -> str:
        return _read_record(tools, concept_id)

    @app.prompt(name="context_pack", title="Project memory for a task")
    async def context_pack(task: str) -> str:
        """The project memory relevant to a task: risks first, cited, within the word budget."""
        return _prompt_text(lambda: tools.build_context_pack(_nonblank(task)))

    @app.prompt(name="handoff", title="Hand over a task")
    async def handoff_prompt(task: str) -> str:
        """A context pack for the task plus the open proposal inbox, to pick up where the last agent stopped."""
        return _prompt_text(lambda: tools.handoff(_nonblank(task)))

    @app.tool(annotations=READ_ONLY)
    async def search_memory(
        query: Annotated[str, Field(min_length=1, description="Words to search for.")],
        path: Annotated[str | None, Field(description="Only records that apply to this repository path.")] = None,
        type: Annotated[MemoryType | None, Field(description="Only records of this type.")] = None,
        lane: Annotated[Lane | None, Field(description="Only records in this lane.")] = None,
        limit: Annotated[int | None, Field(ge=1, le=MAX_LIMIT, description="At most this many hits.")] = None,
        include_local: Annotated[
            bool, Field(description="Also search private local and session memory of this machine.")
        ] = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Full-text search over the current memory records; each hit cites its record and evidence."""
        return _run(
            lambda: tools.search_memory(
                query, path=path, type=type, lane=lane, limit=limit, include_local=include_local
            )
        )

    @app.tool(annotations=READ_ONLY)
    async def build_context_pack(
        task: Annotated[str, Field(min_length=1, description="What you are about to do.")],
        paths: Annotated[list[str] | None, Field(description="Repository paths the task touches.")] = None,
        budget: Annotated[int | None, Field(ge=1, description="Word budget for the pack.")] = None,
        include_local: Annotated[
            bool, Field(description="Also include private local and session memory of this machine.")
        ] = False,
    ) -> Annotated[CallToolResult, ContextOutput]:
        """A prompt-ready context pack of the memory relevant to a task, within a word budget."""
        return _run(
            lambda: tools.build_context_pack(task, paths=paths or (), budget=budget, include_local=include_local)
        )

    @app.tool(annotations=READ_ONLY)
    async def precheck_path(
        path: Annotated[str, Field(min_length=1, description="A repository path you are about to change.")],
    ) -> Annotated[CallToolResult, PrecheckOutput]:
        """Risks, warnings and failed attempts recorded for a path, most severe first."""
        return _run(lambda: tools.precheck_path(path))

    @app.tool(annotations=READ_ONLY)
    async def precheck_command(
        command: Annotated[str, Field(min_length=1, description="A shell command you are about to run.")],
    ) -> Annotated[CallToolResult, PrecheckOutput]:
        """Risks, warnings and failed attempts recorded for a command, most severe first."""
        return _run(lambda: tools.precheck_command(command))

    @app.tool(annotations=READ_ONLY)
    async def precheck_action(
        action: Annotated[str, Field(min_length=1, description="An action in a few words, e.g. 'bump the MSRV'.")],
    ) -> Annotated[CallToolResult, PrecheckOutput]:
        """Risks, warnings and failed attempts recorded for an action, most severe first."""
        return _run(lambda: tools.precheck_action(action))

    @app.tool(annotations=READ_ONLY)
    async def inspect_memory_expiry(
        record_id: Annotated[str, Field(min_length=1, description="The record ID to explain.")],
    ) -> Annotated[CallToolResult, ExpiryOutput]:
        """Why a record is current or query-only: its lane rule, retention boundary and reason."""
        return _run(lambda: tools.inspect_memory_expiry(record_id))

    @app.tool(annotations=READ_ONLY)
    async def handoff(
        task: Annotated[str, Field(min_length=1, description="The task being handed over.")],
        include_local: Annotated[
            bool, Field(description="Also include the current session checkpoint (session memory of this machine).")
        ] = False,
    ) -> Annotated[CallToolResult, HandoffOutput]:
        """A context pack plus the open proposal inbox (and, on request, the session checkpoint), for switching agents."""  # noqa: E501  (the tool's description)
        return _run(lambda: tools.handoff(task, include_local=include_local))

    return app


def _nonblank(task: str) -> str:
    if not task.strip():
        raise ValueError("task must not be empty")
    return task


def serve_stdio(ws: Workspace) -> None:
    """Serve `ws` over stdin/stdout until the client closes the connection."""
    tools = MemoryTools(ws)
    tools.warm()  # a broken index or shared.db fails here, as a CLI error, before the protocol starts
    build_server(tools).run("stdio")
