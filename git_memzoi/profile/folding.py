"""Names a case-insensitive or normalising filesystem would check out as `.memzoi` (import-light, pure).

git writes a root entry `.MEMZOI/`, `.memzoi./` or `.mem\u200czoi/` into `.memzoi/` on macOS
(HFS+, APFS) and Windows (NTFS), so memory no hook checked would land there. The rules follow
git's own for `.git` (`is_hfs_dotgit` in utf8.c, `is_ntfs_dotgit` in path.c), applied to
`.memzoi` and, to err on the side of refusing, all together:

- HFS+ drops "ignorable" code points anywhere in a name (zero-width joiners, direction marks,
  the BOM): U+200C..U+200F, U+202A..U+202E, U+206A..U+206F, U+FEFF;
- NTFS ignores trailing spaces and periods, and what follows a `:` (an alternate data stream);
  it also answers to the 8.3 short name (`MEMZOI~1` to `~4`, or the hashed `ME` + four hex
  digits + `~N` fall-back);
- all three compare letters case-insensitively; folding by `str.upper` also takes the
  non-ASCII letters that upcase to ASCII (U+0131 dotless i, U+017F long s).
"""

from __future__ import annotations

import re
import unicodedata

from git_memzoi.layout import LOG_FILE, MEMZOI_DIR, PROJECT_CONFIG, RESERVED_FILES

_IGNORABLE = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
_SHORT = re.compile(r"MEMZOI~[1-4]|ME[0-9A-F]{4}~[1-9]")
_FOLDED = MEMZOI_DIR.upper()


def folds_to_memzoi(name: str) -> bool:
    """True when `name` is not `.memzoi` but a macOS or Windows checkout would write it there."""
    if name == MEMZOI_DIR:
        return False
    base = _IGNORABLE.sub("", name).split(":", 1)[0].rstrip(" .").upper()
    return base == _FOLDED or _SHORT.fullmatch(base) is not None


#: The names memzoi gives meaning to at some level under .memzoi/ (a record's name ends in .md).
_GOVERNED = frozenset(("records", "proposals", "pending", "resolved", "applied", "rejected", PROJECT_CONFIG, LOG_FILE))
_GOVERNED |= frozenset(RESERVED_FILES)
#: An 8.3 short name (`RECORD~1`, `PR4A1B~1.MD`): NTFS may answer to it for another entry of the folder.
_SHORT_NAME = re.compile(r"[^.~]{1,8}~[0-9]+(?:\.[^.]*)?")
_FOLD = "a case-insensitive or normalising filesystem (macOS, Windows)"


def _plain(name: str) -> str:
    """`name` as NTFS and HFS+ store it: ignorable code points out, an NTFS stream and trailing dots and spaces cut."""
    return _IGNORABLE.sub("", name).split(":", 1)[0].rstrip(" .")


def checked_out_as(name: str) -> str:
    """The one name every entry a macOS or Windows checkout writes as the same file compares equal under.

    `_plain`, then Unicode composed (HFS+ and APFS store one form), then folded by `str.upper`
    (which takes U+0131 and U+017F to ASCII) and `str.casefold` (which takes the Kelvin sign).
    """
    return unicodedata.normalize("NFC", _plain(name)).upper().casefold()


def alias_fault(names: list[str]) -> str | None:
    """Why a folder under .memzoi/ holding these entries is not what macOS or Windows checks out
    (`holds ...`, for treeshape.malformed), or None.

    Refused: two entries written as one file (`Records` and `records`, NFC and NFD twins); an
    entry written under another name (`Records` as `records`, `a.md.` as `a.md`); a name Windows
    may take for another entry's short name (`RECORD~1`). A checkout on those systems would put
    a file no check saw where memzoi reads records, packets or its config.
    """
    seen: dict[str, str] = {}
    for name in names:
        folded = checked_out_as(name)
        if folded in seen:
            return f"holds {shown(seen[folded])!r} and {shown(name)!r}, which {_FOLD} checks out as one"
        seen[folded] = name
        if _plain(name) != name or (folded != name and (folded in _GOVERNED or folded.endswith(".md"))):
            return f"holds {shown(name)!r}, which {_FOLD} checks out as {shown(folded)!r}"
        if _SHORT_NAME.fullmatch(name):
            return f"holds {shown(name)!r}, which Windows may take for the short name of another entry"
    return None


def shown(name: str) -> str:
    """`name` with every non-ASCII or control character escaped, so that the twin is visible."""
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in name)
