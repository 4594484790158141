"""`novikoff cache`: where the cache of checked lemmas is, and clearing it."""

from __future__ import annotations

from . import lemma_cache

__all__ = ["register"]


def register(sub) -> None:
    cache = sub.add_parser("cache", help="show or clear the cache of checked lemmas")
    cache.add_argument("--clear", action="store_true",
                       help="remove every entry (the next run checks the proofs again)")
    cache.set_defaults(handler=_cache)


def _cache(args) -> int:
    if args.clear:
        print(f"cleared {lemma_cache.clear()}")
        return 0
    directory = lemma_cache.cache_dir()
    entries = lemma_cache.entries()
    size = sum(_size(p) for p in entries)
    print(f"{directory}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, "
          f"{size / 1024:.0f} kB (${lemma_cache.CACHE_DIR_ENV} sets the directory; "
          f"--no-cache before a command leaves it alone)")
    return 0


def _size(path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # removed meanwhile by another process
        return 0
