"""What a tool handler knows about its call: ``ToolContext`` and the host's bridges."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from os.path import isabs
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from .errors import ToolRuntimeMissing
from .secret_files import is_secret
from .tool_reports import Reporter, log_event, progress_event

Surface = Literal["router", "phase", "mcp", "cli"]
SURFACES: tuple[str, ...] = ("router", "phase", "mcp", "cli")

BridgeFn = Callable[..., Awaitable[Any] | Any]
T = TypeVar("T")


def as_names(value: Iterable[str], what: str) -> tuple[str, ...]:
    """``value`` as a tuple of names. A bare string is refused: ``tuple("shell")`` would silently be
    ``("s", "h", "e", "l", "l")`` — an ``exclude="shell"`` that excludes nothing."""
    if isinstance(value, str | bytes):
        raise TypeError(f"{what} must be a list of names, not a string: write [{value!r}]")
    return tuple(value)


def frozen_names(value: Iterable[str] | None, what: str) -> frozenset[str] | None:
    """``value`` as a frozen set of names (``as_names``); None stays None, a frozen set is kept."""
    if value is None or type(value) is frozenset:
        return value
    return frozenset(as_names(value, what))


@dataclass(frozen=True, slots=True)
class RouterCallerState:
    """Call-level state of the router loop (gate layer 3). All fields optional.

    ``exclude`` names tools hidden for this call; ``plan_mode`` marks a plan step running, which
    hides every tool whose author gates ``plan_mode="deny"`` (``ToolGates``); ``allowed_tools``,
    when set, is the only tools this step may use (a plan step's tool list).
    """

    exclude: frozenset[str] = frozenset()
    allowed_tools: frozenset[str] | None = None
    plan_mode: bool = False
    turn: int | None = None
    conversation_id: str | None = None

    def __post_init__(self) -> None:
        # A bare string would match by substring ("shell_readonly" admitting "shell"): refuse it.
        object.__setattr__(self, "exclude", frozen_names(self.exclude, "exclude"))
        object.__setattr__(self, "allowed_tools", frozen_names(self.allowed_tools, "allowed_tools"))


@dataclass(frozen=True, slots=True)
class PhaseCallerState:
    """Call-level state of a phase (gate layer 3). ``allowed_ops`` None means the profile default."""

    allowed_ops: tuple[str, ...] | None = None
    skill: str | None = None
    phase: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        if self.allowed_ops is not None:
            object.__setattr__(self, "allowed_ops", as_names(self.allowed_ops, "allowed_ops"))


@dataclass(frozen=True, slots=True)
class CallGates:
    """What a host passed for one call beyond its context: ``invoke_tool``'s ``exclude`` and
    ``allowed_ops``. The dispatcher hands the handler a context carrying them (``ToolContext.
    call_gates``) and decides the call's gates from that context alone, so a tool that asks what its
    caller may see (``registry.visible_names(ctx.surface, ctx)``) gets the dispatcher's own answer.
    ``exclude`` adds to every other exclusion; ``allowed_ops`` (None: not set) is a phase's list."""

    exclude: frozenset[str] = frozenset()
    allowed_ops: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", frozen_names(self.exclude, "exclude"))
        if self.allowed_ops is not None:
            object.__setattr__(self, "allowed_ops", as_names(self.allowed_ops, "allowed_ops"))


@dataclass(frozen=True, slots=True)
class HostBridge:
    """What the host application supplies to tools. Any part may be missing; a tool that needs a
    missing one fails with ``runtime_missing`` naming it, never an AttributeError.

    ``ask_user`` reaches the person behind the call (a terminal, an MCP client's elicitation).
    ``services`` is the typed extension point for everything a pack needs from its host: a mapping
    from a type the pack defines to the host's instance of it (``{CatalogBridge: CatalogBridge(...)}``),
    looked up by that type (``bridge.service(CatalogBridge)``), so a pack's needs travel under the
    pack's own name and the core names none. ``extras`` holds callables by name, for a host and its
    own tools (as ``ToolContext.extras`` holds call data this class does not name).
    """

    ask_user: BridgeFn | None = None
    services: Mapping[type[Any], Any] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked where the bridge is built: a service under the wrong type would otherwise surface as
        # an AttributeError inside some tool, much later. A read-only copy, so the host cannot swap a
        # service under a context already handed out.
        if not isinstance(self.services, Mapping):
            raise TypeError(
                "HostBridge(services=...) must be a mapping of type to instance, "
                f"not {type(self.services).__name__}"
            )
        for kind, value in self.services.items():
            _check_service(kind, value)
        object.__setattr__(self, "services", MappingProxyType(dict(self.services)))

    def service(self, kind: type[T]) -> T | None:
        """The host's instance of the service type ``kind``, or None when the host supplies none."""
        found: T | None = self.services.get(kind)
        return found

    def require_service(self, kind: type[T], *, tool: str | None = None) -> T:
        """The host's instance of ``kind``, or ``ToolRuntimeMissing`` saying who must supply it."""
        found = self.service(kind)
        if found is None:
            who = f"tool {tool!r}" if tool else "this tool"
            name = kind.__qualname__
            raise ToolRuntimeMissing(
                f"{who} needs the host service {name} ({kind.__module__}), which this host does not "
                f"supply; pass HostBridge(services={{{name}: {name}(...)}}) in the ToolContext",
                tool=tool,
            )
        return found

    def require(self, name: str, *, tool: str | None = None) -> Any:
        """Return the bridge called ``name`` (``ask_user`` or one of ``extras``) or raise
        ``ToolRuntimeMissing`` saying who must supply it."""
        value = self._named(name)
        if value is None:
            who = f"tool {tool!r}" if tool else "this tool"
            how = f"HostBridge({name}=...)" if name == "ask_user" else f"HostBridge(extras={{{name!r}: ...}})"
            raise ToolRuntimeMissing(
                f"{who} needs the host bridge {name!r}, which this host does not supply; "
                f"pass {how} in the ToolContext",
                tool=tool,
            )
        return value

    def has(self, name: str) -> bool:
        """True when the bridge ``name`` is supplied."""
        return self._named(name) is not None

    def _named(self, name: str) -> Any:
        return self.ask_user if name == "ask_user" else self.extras.get(name)


def _check_service(kind: Any, value: Any) -> None:
    """A service entry: a class (or runtime-checkable protocol) key, and an instance of it."""
    if not isinstance(kind, type):
        raise TypeError(f"HostBridge(services=...): a key must be a type, not {kind!r}")
    try:
        ok = isinstance(value, kind)
    except TypeError:  # a Protocol without @runtime_checkable cannot be checked
        raise TypeError(
            f"HostBridge(services=...): {kind.__qualname__} cannot be checked with isinstance; "
            "key a service by a class or a @runtime_checkable Protocol"
        ) from None
    if not ok:
        raise TypeError(
            f"HostBridge(services=...): the service under {kind.__qualname__} is a "
            f"{type(value).__name__}, not a {kind.__qualname__}"
        )


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a handler may know about its call.

    ``surface`` is where the call comes from; ``agent`` the calling agent (tools must take identity
    from here, never from model arguments); ``workspace`` the root that relative paths resolve
    against; ``settings`` the owning plugin's validated settings (set by the dispatcher per call);
    ``agent_tools``, when set, is a per-agent allowlist of tool names (gate layer 3); ``entry`` the
    program the call came through (``router``, ``phase``, ``mcp``, ``cli`` or a host's own name;
    None: the surface) — part of an approval's key, since ``mcp serve`` calls on the router surface;
    ``reporter`` is the host's listener for ``report_progress`` and ``log`` (None: nobody listens,
    and both are no-ops — as in a context that crossed a process boundary); ``session`` the host's
    id of the conversation or client session the call belongs to (an approval "for this session"
    covers calls of that session only; None: no session); ``call_gates`` what the host passed to
    the dispatcher for this call beyond the context (set by the dispatcher; ``CallGates``);
    ``host_files`` the host's own files (absolute path → what it is), which no tool may write and
    no confined process may be granted to (the dispatcher merges the registry's list in); those
    whose value is a ``SecretFile`` no tool reads and no confined process sees either.
    """

    surface: Surface = "cli"
    agent: str | None = None
    workspace: Path = field(default_factory=Path.cwd)
    settings: Any = None
    router_state: RouterCallerState | None = None
    phase_state: PhaseCallerState | None = None
    bridge: HostBridge = field(default_factory=HostBridge)
    agent_tools: frozenset[str] | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    entry: str | None = None
    reporter: Reporter | None = None
    session: str | None = None
    call_gates: CallGates | None = None
    host_files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked here, once, so a mistyped context fails where it is built, not as an execution
        # error on every later call that a model would be shown.
        if self.surface not in SURFACES:
            import difflib

            close = difflib.get_close_matches(str(self.surface), SURFACES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"ToolContext(surface={self.surface!r}): unknown surface{hint}; "
                f"use one of {', '.join(SURFACES)}"
            )
        if self.agent is not None and not isinstance(self.agent, str):
            raise TypeError(
                f"ToolContext(agent=...) must be a string or None, not {type(self.agent).__name__}"
            )
        if not isinstance(self.workspace, Path):
            if not isinstance(self.workspace, str | PathLike):
                raise TypeError(
                    f"ToolContext(workspace=...) must be a path, not {type(self.workspace).__name__}"
                )
            object.__setattr__(self, "workspace", Path(self.workspace))
        for name, kind in (
            ("router_state", RouterCallerState),
            ("phase_state", PhaseCallerState),
            ("bridge", HostBridge),
            ("call_gates", CallGates),
        ):
            value = getattr(self, name)
            if (value is not None or name == "bridge") and not isinstance(value, kind):
                raise TypeError(
                    f"ToolContext({name}=...) must be a {kind.__name__}"
                    + (" or None" if name != "bridge" else "")
                    + f", not {type(value).__name__}"
                )
        for name in ("entry", "session"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"ToolContext({name}=...) must be a string or None, not {type(value).__name__}"
                )
        if not isinstance(self.host_files, Mapping) or not all(
            isinstance(p, str) and isabs(p) and "\x00" not in p and isinstance(w, str)
            for p, w in self.host_files.items()
        ):
            raise TypeError(
                "ToolContext(host_files=...) must map absolute paths to what they are (strings), "
                f"not {str(self.host_files)[:200]}"
            )
        if not isinstance(self.extras, Mapping):
            raise TypeError(f"ToolContext(extras=...) must be a mapping, not {type(self.extras).__name__}")
        if self.agent_tools is not None and type(self.agent_tools) is not frozenset:
            object.__setattr__(self, "agent_tools", frozen_names(self.agent_tools, "agent_tools"))

    def with_surface(self, surface: Surface) -> ToolContext:
        """A copy of this context for another surface."""
        return replace(self, surface=surface)

    def with_settings(self, settings: Any) -> ToolContext:
        """A copy carrying a plugin's settings (the dispatcher does this per call)."""
        return replace(self, settings=settings)

    def with_host_files(self, host_files: Mapping[str, str]) -> ToolContext:
        """This context with ``host_files`` added to its own (the dispatcher does this per call, from
        the registry: its words win), a path secret when either side marks it (``SecretFile``: a
        plain name never drops the mark). The same context when nothing is new."""
        own = self.host_files
        if own is host_files or all(
            own.get(path) == what and (is_secret(own.get(path)) or not is_secret(what))
            for path, what in host_files.items()
        ):
            return self
        if not own:
            return replace(self, host_files=host_files)
        merged = {**own, **host_files}
        for path, what in own.items():
            if is_secret(what) and not is_secret(merged[path]):
                merged[path] = what
        return replace(self, host_files=merged)

    def with_reporter(self, reporter: Reporter | None) -> ToolContext:
        """A copy whose reports go to ``reporter`` (a host does this per call)."""
        return replace(self, reporter=reporter)

    def report_progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell whoever is listening how far the work is: ``done`` of ``total`` (None: unknown),
        with an optional short message. Never blocks; callable from sync and async handlers. Bad
        numbers raise ``TypeError``/``ValueError`` even when nobody listens."""
        event = progress_event(done, total, message)
        if self.reporter is not None:
            self.reporter.report(event)

    def log(self, level: str, message: str, **data: Any) -> None:
        """Log to whoever is listening (an MCP client's log, a loop host's events): ``level`` one of
        ``reporting.LOG_LEVELS`` (``debug`` … ``emergency``), ``data`` JSON values shown with it."""
        event = log_event(level, message, data)
        if self.reporter is not None:
            self.reporter.report(event)


def choose_workspace(explicit: str | PathLike[str] | None, *, option: str = "--workspace") -> Path:
    """The workspace root a host serves tools in: ``explicit`` (resolved, it must be a directory),
    or else the current directory — unless that is the filesystem root or the home directory.

    MCP clients (Claude Desktop, Cursor, ...) start servers from ``/`` or the home directory; a
    workspace taken from there would hand every tool the whole machine or every file of the user.
    An *implicit* choice of either is refused (``ReynError`` saying which ``option`` to pass); an
    explicit ``--workspace /`` is the operator's decision and is kept.
    """
    from .errors import ReynError

    if explicit is not None:
        path = Path(explicit).expanduser().resolve()
        if not path.is_dir():
            raise ReynError(f"{option} {str(explicit)!r} is not a directory")
        return path
    here = Path.cwd().resolve()
    home = Path.home().resolve()
    if here == Path(here.anchor) or here == home:
        where = "the filesystem root" if here == Path(here.anchor) else "your home directory"
        raise ReynError(
            f"no {option} given and the current directory {here} is {where} (where MCP clients start "
            f"servers); pass {option} /absolute/path/to/your/project, or run from that folder "
            "(`reyn mcp install` writes the option for you)"
        )
    return here
