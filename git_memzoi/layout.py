"""Every path and file name memzoi uses: the `.memzoi/` source tree and `$MEMZOI_HOME`, as the profile lays them out.

This module imports nothing, so that the start-up paths (`cli/entry.py`, `hooks/quick.py`, the
Claude Code hook) can name these places without loading anything else. Source-tree paths are
repository-relative strings with `/` separators (as git names them); `$MEMZOI_HOME` names are
single path components that `runtime.home.Layout` joins.
"""

# The source tree: .memzoi/ in the repository.
MEMZOI_DIR = ".memzoi"
REPO_CONFIG = f"{MEMZOI_DIR}/config.toml"
INDEX_FILE = "index.md"
LOG_FILE = "log.md"
#: Files directly under .memzoi/ for people, which may define neither a record nor a proposal.
RESERVED_FILES = (INDEX_FILE, LOG_FILE)
#: What the client hooks' quick paths ask git about: .memzoi, and the root names a case-insensitive
#: filesystem checks out as .memzoi (`.MEMZOI`, `.memzoi.`, `MEMZOI~1`; profile.folding has every rule)
MEMZOI_PATHSPECS = (
    ":(top).memzoi",
    ":(top,icase,glob).memzoi*",
    ":(top,icase,glob).memzoi*/**",
    ":(top,icase,glob)memzoi~*",
    ":(top,icase,glob)memzoi~*/**",
)
#: The largest file .memzoi/ may hold; every gate takes a file's size before it reads the file.
MAX_FILE_BYTES = 1024 * 1024
#: The most one commit may add to a log.md (which has no size limit): checked by sizes, unread, at every hook.
LOG_GROWTH_MAX = 16 * 1024 * 1024
LOG = f"{MEMZOI_DIR}/{LOG_FILE}"
RECORDS = f"{MEMZOI_DIR}/records"
PROPOSALS = f"{MEMZOI_DIR}/proposals"
PENDING = f"{PROPOSALS}/pending"
RESOLVED = f"{PROPOSALS}/resolved"
#: The folder of resolved packets by outcome.
RESOLVED_BY_OUTCOME = {"applied": f"{RESOLVED}/applied", "rejected": f"{RESOLVED}/rejected"}
#: Every record and packet file name ends so; a concept ID is a record's path without it.
SUFFIX = ".md"
#: Where `.memzoi/log.md merge=union` is set, at the work tree's root.
GITATTRIBUTES = ".gitattributes"
#: Temp files memzoi writes next to a file it then replaces (atomic writes, git index copies).
TEMP_PREFIX = ".memzoi-tmp-"


def record_path(concept_id: str) -> str:
    """`.memzoi/records/<concept-id>.md`."""
    return f"{RECORDS}/{concept_id}{SUFFIX}"


def pending_path(file_id: str) -> str:
    """`.memzoi/proposals/pending/<file-id>.md`."""
    return f"{PENDING}/{file_id}{SUFFIX}"


def resolved_path(outcome: str, proposal_id: str) -> str:
    """`.memzoi/proposals/resolved/<outcome>/<proposal-id>.md` (outcome: applied or rejected)."""
    return f"{RESOLVED_BY_OUTCOME[outcome]}/{proposal_id}{SUFFIX}"


#: In the repository's common git directory: the random ID that binds its runtime state to it.
REPOSITORY_ID_FILE = "memzoi-id"

# $MEMZOI_HOME (default ~/.memzoi): runtime state that never enters the repository.
HOME_ENV = "MEMZOI_HOME"
DEFAULT_HOME = "~/.memzoi"
USER_CONFIG = "config.toml"
PROJECTS = "projects"
# ... projects/<repository-key>/
PROJECT_CONFIG = "config.toml"
SHARED_DB = "shared.db"
LIFECYCLE_LOCK = "repo-lifecycle.lock"
PARSE_CACHE_DB = "parse-cache.db"
HOOK_TREES = "hook-trees"
#: What each record of a records tree cites, kept by tree OID (git_memzoi/index/citation_store.py).
CITE_TREES = "cite-trees"
JOURNAL = "journal"
WORKTREES = "worktrees"
# ... projects/<repository-key>/worktrees/<worktree-key>/
INDEX_DB = "index.db"
#: index.db's schema (PRAGMA user_version); the no-op read path checks it without index.index_db.
INDEX_SCHEMA_VERSION = 12
#: A new index.db is built under this prefix, then replaces the installed one.
INDEX_TEMP_PREFIX = f"{INDEX_DB}.tmp-"
INDEX_LOCK = "index.lock"
#: Each record's freshness at one HEAD commit (derived, per worktree: git_memzoi/freshness/).
FRESHNESS_DB = "freshness.db"
EXPORTS = "exports"
#: What each agent session was already given (agents/sessions.py), one small JSON file per session.
AGENT_SESSIONS = "agent-sessions"

#: A runtime record's path in results and in index.db: `shared.db:<store>/<id>`.
RUNTIME_PATH_PREFIX = f"{SHARED_DB}:"


def runtime_path(store: str, record_id: str) -> str:
    """The path a runtime record (local or session memory in shared.db) is cited by."""
    return f"{RUNTIME_PATH_PREFIX}{store}/{record_id}"
