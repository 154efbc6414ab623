"""Finding a dataset file: $SVMLAB_DATA, embedded copy, user cache, download (pooch).

Resolution order, the first copy that passes its checks wins:

1. ``$SVMLAB_DATA`` (the shared directory): the MANIFEST name, then the
   original file name;
2. the copy embedded in the package (a9a train and test): checksummed and
   always there, so a9a never touches the network, never prints pooch's
   "Downloading data from ..." and never reads the user cache, where a
   damaged or tampered copy could otherwise win;
3. the user cache (``$SVMLAB_CACHE`` or ``pooch.os_cache("svmlab")``);
4. a download (pooch, https) into the cache, unless ``download=False`` or
   ``SVMLAB_OFFLINE=1``; ``SVMLAB_DOWNLOAD_URL`` (or ``base_url=``) replaces
   the original locations by a mirror with the cache's layout.

Every candidate is read once, through one open file descriptor, at most
``max_bytes`` bytes, and everything below is checked on those bytes in
memory (a file swapped during the read cannot pass with another file's
checksum).  It must decompress within the file's ``max_bytes`` and parse
(:mod:`svmlab.datasets._parse`: any damage, and any parser failure, is a
:class:`DatasetCorruptError` naming the file and the line or offset), one
of its registry checksums must vouch for it (:mod:`svmlab.datasets._registry`:
the SHA-256 of the stored copy, of the original download, or of the
content), and its content must match the registry (number of samples, label
counts, image shape).  A file with no known checksum (covtype) is used on
the content checks alone, with a warning.

A candidate that fails is reported with a RuntimeWarning and the next
source is tried: a cache file is first moved aside to ``<name>.corrupt``
(kept for inspection, never read again); a file in the shared directory or
the package is left alone.  If nothing works the error names the dataset,
the file, the URL and the directories to put the file in.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ._parse import (DEFAULT_MAX_BYTES, DatasetCorruptError, DatasetNotFoundError,
                     _compression, decompress, libsvm_content_sha256, parse_idx_bytes,
                     parse_libsvm_bytes, read_file_bytes)

EMBEDDED_DIR = Path(__file__).resolve().parent.parent / "data"


def data_dir() -> Path | None:
    """The shared benchmark directory from ``$SVMLAB_DATA`` (or None)."""
    d = os.environ.get("SVMLAB_DATA")
    return Path(d) if d else None


def cache_dir() -> Path:
    """User cache: ``$SVMLAB_CACHE`` or ``pooch.os_cache("svmlab")``."""
    d = os.environ.get("SVMLAB_CACHE")
    if d:
        return Path(d)
    import pooch

    return Path(pooch.os_cache("svmlab"))


def download_allowed(download=None) -> bool:
    if download is not None:
        return bool(download)
    return os.environ.get("SVMLAB_OFFLINE", "").lower() in ("", "0", "false", "no")


#: parsed files kept in memory, keyed by the SHA-256 of the stored bytes
#: they were parsed from (plus how they were parsed): a hit is the parse of
#: exactly the bytes just read and hashed, never of what a path held earlier
_MEMO: OrderedDict = OrderedDict()
_MEMO_SIZE = 12
_MEMO_LOCK = threading.Lock()


class _Read:
    """One read of a file: its stored bytes (from one open file descriptor,
    at most ``max_bytes``), their SHA-256, and the parse of those bytes.

    The checksums are computed from ``raw`` and the parse comes from
    ``raw`` (or from the memo entry of the same SHA-256), so what is
    checked is what is returned (``docs/decisions/27r02-one-read.md``)."""

    def __init__(self, path, kind, n_features, max_bytes):
        self.path, self.kind = path, kind
        self.raw = read_file_bytes(path, max_bytes)
        self.sha256 = hashlib.sha256(self.raw).hexdigest()
        key = (self.sha256, _compression(path), kind, int(n_features), int(max_bytes))
        with _MEMO_LOCK:
            entry = _MEMO.get(key)
            if entry is not None:
                _MEMO.move_to_end(key)
        if entry is None:
            data = decompress(self.raw, _compression(path), max_bytes, path)
            if kind == "libsvm":
                parsed = parse_libsvm_bytes(data, n_features, path)
                for arr in (parsed[0].data, parsed[0].indices, parsed[0].indptr, parsed[1]):
                    arr.flags.writeable = False
                entry = {"parsed": parsed}
            else:
                parsed = parse_idx_bytes(data, path)
                parsed.flags.writeable = False
                entry = {"parsed": parsed, "content": hashlib.sha256(data).hexdigest()}
            del data
            with _MEMO_LOCK:
                _MEMO[key] = entry
                while len(_MEMO) > _MEMO_SIZE:
                    _MEMO.popitem(last=False)
        self.entry = entry

    @property
    def parsed(self):
        return self.entry["parsed"]

    def md5(self):
        return hashlib.md5(self.raw).hexdigest()

    def content_sha256(self):
        """The content checksum (see :mod:`svmlab.datasets._registry`)."""
        if "content" not in self.entry:
            self.entry["content"] = libsvm_content_sha256(*self.entry["parsed"])
        return self.entry["content"]


def parse(path, kind, n_features, max_bytes=DEFAULT_MAX_BYTES):
    """The parsed, read-only content of ``path`` (one bounded read)."""
    return _Read(path, kind, n_features, int(max_bytes)).parsed


def content_sha256(path, kind, n_features, max_bytes=DEFAULT_MAX_BYTES):
    """The content checksum of a file (see :mod:`svmlab.datasets._registry`)."""
    return _Read(path, kind, n_features, int(max_bytes)).content_sha256()


def clear_memory_cache():
    """Forget every parsed file kept in memory."""
    with _MEMO_LOCK:
        _MEMO.clear()


def _check_content(fs, parsed, kind, n_features):
    """Return None if the parsed file matches the registry, else a reason string."""
    if kind == "libsvm":
        X, y = parsed
        n = X.shape[0]
        labels = y
    elif fs.shape_tail is not None:
        if parsed.ndim != 1 + len(fs.shape_tail) or tuple(parsed.shape[1:]) != fs.shape_tail:
            return f"image shape {parsed.shape}, expected (n, {', '.join(map(str, fs.shape_tail))})"
        n = parsed.shape[0]
        labels = None
    else:
        n = parsed.shape[0]
        labels = parsed
    if fs.n_samples is not None and n != fs.n_samples:
        return f"{n} samples, expected {fs.n_samples}"
    if labels is not None and fs.label_counts is not None:
        vals, cnt = np.unique(labels, return_counts=True)
        got = {int(v) if float(v).is_integer() else float(v): int(c) for v, c in zip(vals, cnt)}
        if got != dict(fs.label_counts):
            return f"label counts {got}, expected {dict(fs.label_counts)}"
    return None


def _checksum_problem(fs, read):
    """None when one of ``fs``'s checksums vouches for the bytes of
    ``read`` (a :class:`_Read`), or it has none: then ``"unverified"``;
    else the reason.  The stored bytes' SHA-256 first (the stored copy, the
    original download, the latter with its published MD5 too), then the
    content's."""
    if not fs.hashes:
        return "unverified"
    digest = read.sha256
    if digest == fs.stored_sha256:
        return None
    if digest == fs.upstream_sha256:
        if fs.upstream_md5 and read.md5() != fs.upstream_md5:
            return f"checksum mismatch (MD5 differs from the published {fs.upstream_md5})"
        return None
    if fs.content_sha256 is not None:
        got = read.content_sha256()
        if got == fs.content_sha256:
            return None
        return (f"checksum mismatch (content SHA-256 {got}, expected {fs.content_sha256}: "
                "the data differ from the checked copy)")
    expected = " or ".join(h for h in (fs.stored_sha256, fs.upstream_sha256) if h)
    return f"checksum mismatch (SHA-256 {digest}, expected {expected})"


def _url_for(fs, base_url):
    base_url = base_url or os.environ.get("SVMLAB_DOWNLOAD_URL")
    if base_url:
        return base_url.rstrip("/") + "/" + fs.upstream
    return fs.url


def _candidates(fs):
    """(source, path) for local files, in resolution order."""
    d = data_dir()
    if d is not None:
        if fs.stored:
            yield "SVMLAB_DATA", d / fs.stored
        if fs.upstream != fs.stored:
            yield "SVMLAB_DATA", d / fs.upstream
    if fs.embedded:
        yield "embedded", EMBEDDED_DIR / fs.embedded
    c = cache_dir()
    yield "cache", c / fs.upstream
    if fs.stored and fs.stored != fs.upstream:
        yield "cache", c / fs.stored


def _where_to_put(fs):
    d = data_dir()
    places = []
    if d is not None:
        places.append(str(d / (fs.stored or fs.upstream)))
    places.append(str(cache_dir() / fs.upstream))
    return places


def _move_aside(path):
    """Move a failed cache file to ``<name>.corrupt`` (replacing an older
    one); returns the new path, or None if it could only be deleted."""
    dest = path.with_name(path.name + ".corrupt")
    try:
        os.replace(path, dest)
        return dest
    except OSError:
        try:
            path.unlink()
        except OSError:
            pass
        return None


_UNVERIFIED_WARNED: set = set()


def fetch(name, fs, kind, n_features, *, download=None, base_url=None, max_bytes=None):
    """Resolve one file of dataset ``name``.

    Returns ``(parsed, source, path)``: the parsed read-only content, where it
    came from ("SVMLAB_DATA", "embedded", "cache" or "download") and the
    file.  ``max_bytes`` caps the decompressed bytes read from any candidate
    (None: the registry's cap for this file).
    """
    cap = int(max_bytes if max_bytes is not None else (fs.max_bytes or DEFAULT_MAX_BYTES))
    notes = []        # (text, corrupt?)

    def attempt(source, path):
        """The parsed content, or a reason string (the file exists but fails)."""
        try:
            read = _Read(path, kind, n_features, cap)     # the one read of the file
            parsed = read.parsed
            problem = _checksum_problem(fs, read)
        except DatasetCorruptError as exc:     # its message starts with the path
            return f"{source} file {exc}"
        finally:
            read = None                          # the stored bytes are not kept
        if problem not in (None, "unverified"):
            return f"{source} file {path}: {problem}"
        bad = _check_content(fs, parsed, kind, n_features)
        if bad:
            return f"{source} file {path}: wrong content ({bad})"
        if problem == "unverified" and str(path) not in _UNVERIFIED_WARNED:
            _UNVERIFIED_WARNED.add(str(path))
            warnings.warn(
                f"svmlab.datasets: {path} ({name!r}) has no known SHA-256; it was checked by "
                "its parsed content only (row count, labels).", RuntimeWarning, stacklevel=4)
        return parsed

    for source, path in _candidates(fs):
        if not path.is_file():
            continue
        res = attempt(source, path)
        if not isinstance(res, str):
            return res, source, path
        notes.append((res, True))
        if source == "cache":
            dest = _move_aside(path)
            warnings.warn(f"svmlab.datasets: {res}; moved it to {dest} and trying the next "
                          "source" if dest else f"svmlab.datasets: {res}; deleted it and "
                          "trying the next source", RuntimeWarning, stacklevel=3)
        else:
            warnings.warn(f"svmlab.datasets: {res}; ignoring it and trying the next source",
                          RuntimeWarning, stacklevel=3)

    url = _url_for(fs, base_url)
    if url is not None and download_allowed(download):
        res = _download(fs, url, notes, attempt)
        if res is not None:
            return res
    elif url is not None:
        notes.append((f"download of {url} not attempted (offline: SVMLAB_OFFLINE or "
                      "download=False)", False))
    if fs.embedded and not (EMBEDDED_DIR / fs.embedded).is_file():
        notes.append((f"embedded copy {EMBEDDED_DIR / fs.embedded} missing", False))

    fname = fs.stored or fs.upstream
    msg = [f"dataset {name!r}: cannot obtain file {fname!r}."]
    msg.append(f"  original URL: {fs.url or '(none: no public copy in this format)'}")
    msg.append("  put the file at one of: " + " or ".join(_where_to_put(fs))
               + (" (set SVMLAB_DATA to a directory of benchmark files)" if data_dir() is None else ""))
    if notes:
        msg.append("  tried: " + "; ".join(text for text, _ in notes))
    corrupt = any(c for _, c in notes)
    raise (DatasetCorruptError if corrupt else DatasetNotFoundError)("\n".join(msg))


def _download(fs, url, notes, attempt):
    import pooch

    target = cache_dir() / fs.upstream
    target.parent.mkdir(parents=True, exist_ok=True)
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=60)
    known = f"sha256:{fs.upstream_sha256}" if fs.upstream_sha256 else None
    for round_ in (1, 2):
        try:
            path = pooch.retrieve(url, known_hash=known, fname=target.name,
                                  path=target.parent, downloader=downloader)
        except ValueError as exc:  # pooch's hash mismatch: nothing was kept
            notes.append((f"download {url} failed: {exc}", True))
            return None
        except Exception as exc:  # network errors, HTTP errors
            notes.append((f"download {url} failed: {type(exc).__name__}: {exc}", False))
            return None
        res = attempt("download", Path(path))
        if not isinstance(res, str):
            return res, "download", Path(path)
        notes.append((res, True))
        warnings.warn(f"svmlab.datasets: {res}; deleting it"
                      + (" and downloading once more" if round_ == 1 else ""),
                      RuntimeWarning, stacklevel=4)
        Path(path).unlink(missing_ok=True)
    return None
