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

from git_memzoi.layout import MEMZOI_DIR

_IGNORABLE = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
_SHORT = re.compile(r"MEMZOI~[1-4]|ME[0-9A-F]{4}~[1-9]")
_FOLDED = MEMZOI_DIR.upper()


def folds_to_memzoi(name: str) -> bool:
    """True when `name` is not `.memzoi` but a macOS or Windows checkout would write it there."""
    if name == MEMZOI_DIR:
        return False
    base = _IGNORABLE.sub("", name).split(":", 1)[0].rstrip(" .").upper()
    return base == _FOLDED or _SHORT.fullmatch(base) is not None


def shown(name: str) -> str:
    """`name` with every non-ASCII or control character escaped, so that the twin is visible."""
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in name)
