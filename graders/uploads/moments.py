"""Times as the platforms write them, read into timezone-aware datetimes.

Every time the kit reads comes from a platform's file that the student may have touched (a
Gradescope export, nbgrader's timestamp.txt, a worksheet), so the text is capped, every
conversion guarded, and a zone the kit cannot know makes the time unknown rather than guessed.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo


def when(value: object) -> datetime.datetime | None:
    """A time from metadata, timezone-aware (UTC when it names no zone), or None when it is no
    time: a YAML timestamp; Gradescope's `2026-11-20 10:00:00.123456789 -08:00`; nbgrader's
    timestamp.txt, written with `%Y-%m-%d %H:%M:%S.%f %Z` in nbgrader's configured zone
    (`2026-11-20 13:05:00.123456 UTC`: nbgrader/exchange/abc/exchange.py, `timestamp_format`;
    read back by nbgrader/utils.py `parse_utc`); an ISO 8601 string. A zone name is looked up
    in the IANA database (zoneinfo refuses names that are paths); one it does not know makes
    the time unknown rather than guessed."""
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
    text = str(value).strip()[:100]
    date, _, rest = text.partition(" ")
    clock, _, name = rest.partition(" ")
    if not clock:
        date, clock, name = (text[:10], text[11:], "") if text[10:11] in ("T", "t") else (text, "", "")
    clock = clock.replace(",", ".")  # ISO 8601 allows either mark before a fraction; 3.10 reads only "."
    if "." in clock:
        seconds, fraction = clock.split(".", 1)
        digits = len(fraction) - len(fraction.lstrip("0123456789"))
        clock = f"{seconds}.{fraction[: min(digits, 6)].ljust(6, '0')}{fraction[digits:]}"
    if not name and (offset := OFFSET.search(clock)):
        clock, name = clock[: offset.start()], offset.group()
    zone = _zone(name)
    try:
        moment = datetime.datetime.fromisoformat(f"{date}T{clock}" if clock else date)
    except ValueError:
        return None
    if zone is None or (moment.tzinfo is not None and name):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


OFFSET = re.compile(r"(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})$")


def _zone(name: str) -> datetime.tzinfo | None:
    """A zone from `+0800`, `-08:00`, `Z`, `UTC` or an IANA name; UTC for none; None when unknown."""
    if name in ("", "Z", "z", "UTC", "GMT"):
        return datetime.timezone.utc
    if match := re.fullmatch(r"([+-])([0-9]{2}):?([0-9]{2})", name):
        sign = -1 if match[1] == "-" else 1
        try:
            return datetime.timezone(sign * datetime.timedelta(hours=int(match[2]), minutes=int(match[3])))
        except ValueError:
            return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
        return None
