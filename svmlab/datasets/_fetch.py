"""Finding a dataset file: $SVMLAB_DATA, user cache, download (pooch), embedded copy.

Every candidate file is checked before it is used: its hash when one applies
to it (the MANIFEST sha256 for a stored copy, the published upstream hash for
an original download), and always its parsed content (number of samples,
label counts, image shape).  A candidate that fails is reported with a
warning and skipped; a failing file in the user cache is deleted so that the
download step fetches it again.  If nothing works the error names the
dataset, the file, the URL and the directories to put the file in.
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

from ._parse import DatasetCorruptError, DatasetNotFoundError, read_idx, read_libsvm

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


def file_hash(path, alg="sha256") -> str:
    h = hashlib.new(alg)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _hash_ok(path, expected: str) -> bool:
    alg, _, digest = expected.partition(":") if ":" in expected else ("sha256", "", expected)
    return file_hash(path, alg) == digest.lower()


@functools.lru_cache(maxsize=12)
def _parse_cached(path: str, size: int, mtime_ns: int, kind: str, n_features: int):
    """Parse once per (file, size, mtime); results are made read-only."""
    if kind == "libsvm":
        X, y = read_libsvm(path, n_features)
        for a in (X.data, X.indices, X.indptr, y):
            a.flags.writeable = False
        return X, y
    arr = read_idx(path)
    arr.flags.writeable = False
    return arr


def parse(path, kind, n_features):
    st = os.stat(path)
    return _parse_cached(str(path), st.st_size, st.st_mtime_ns, kind, n_features)


def clear_memory_cache():
    """Forget every parsed file kept in memory."""
    _parse_cached.cache_clear()


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


def _url_for(fs, base_url):
    base_url = base_url or os.environ.get("SVMLAB_DOWNLOAD_URL")
    if base_url:
        return base_url.rstrip("/") + "/" + fs.upstream
    return fs.url


def _candidates(fs):
    """(source, path, hash-or-None) for existing local files, in resolution order."""
    seen = set()
    d = data_dir()
    if d is not None:
        if fs.stored:
            yield "SVMLAB_DATA", d / fs.stored, fs.stored_sha256
            seen.add(fs.stored)
        if fs.upstream not in seen:
            yield "SVMLAB_DATA", d / fs.upstream, fs.upstream_hash
    c = cache_dir()
    yield "cache", c / fs.upstream, fs.upstream_hash
    if fs.stored and fs.stored != fs.upstream:
        yield "cache", c / fs.stored, fs.stored_sha256


def _where_to_put(fs):
    d = data_dir()
    places = []
    if d is not None:
        places.append(str(d / (fs.stored or fs.upstream)))
    places.append(str(cache_dir() / fs.upstream))
    return places


def fetch(name, fs, kind, n_features, *, download=None, base_url=None):
    """Resolve one file of dataset ``name``.

    Returns ``(parsed, source, path)``: the parsed read-only content, where it
    came from ("SVMLAB_DATA", "cache", "download" or "embedded") and the file.
    """
    notes = []

    def attempt(source, path, expected_hash, *, same_stored_and_upstream=False):
        if not path.is_file():
            return None
        if expected_hash is not None:
            ok = _hash_ok(path, expected_hash)
            if not ok and same_stored_and_upstream:
                # the same relative name is used for the stored and the upstream copy
                other = fs.upstream_hash if expected_hash == fs.stored_sha256 else fs.stored_sha256
                ok = other is not None and _hash_ok(path, other)
            if not ok:
                return f"{source} file {path}: checksum mismatch (expected {expected_hash})"
        try:
            parsed = parse(path, kind, n_features)
        except DatasetCorruptError as exc:
            return f"{source} file {path}: {exc}"
        bad = _check_content(fs, parsed, kind, n_features)
        if bad:
            return f"{source} file {path}: wrong content ({bad})"
        return parsed

    same = fs.stored is not None and fs.stored == fs.upstream
    for source, path, h in _candidates(fs):
        res = attempt(source, path, h, same_stored_and_upstream=same)
        if res is None:
            continue
        if isinstance(res, str):
            notes.append(res)
            if source == "cache":
                warnings.warn(f"svmlab.datasets: {res}; deleting it and fetching it again",
                              RuntimeWarning, stacklevel=3)
                try:
                    path.unlink()
                except OSError:
                    pass
            else:
                warnings.warn(f"svmlab.datasets: {res}; ignoring it", RuntimeWarning, stacklevel=3)
            continue
        return res, source, path

    url = _url_for(fs, base_url)
    if url is not None and download_allowed(download):
        res = _download(fs, url, kind, n_features, notes, attempt)
        if res is not None:
            return res
    elif url is not None:
        notes.append(f"download of {url} not attempted (offline: SVMLAB_OFFLINE or download=False)")

    if fs.embedded:
        res = attempt("embedded", EMBEDDED_DIR / fs.embedded, fs.stored_sha256)
        if res is not None and not isinstance(res, str):
            return res, "embedded", EMBEDDED_DIR / fs.embedded
        notes.append(res or f"embedded copy {EMBEDDED_DIR / fs.embedded} missing")

    fname = fs.stored or fs.upstream
    msg = [f"dataset {name!r}: cannot obtain file {fname!r}."]
    msg.append(f"  original URL: {fs.url or '(none: no public copy in this format)'}")
    msg.append("  put the file at one of: " + " or ".join(_where_to_put(fs))
               + (" (set SVMLAB_DATA to a directory of benchmark files)" if data_dir() is None else ""))
    if notes:
        msg.append("  tried: " + "; ".join(notes))
    corrupt = any("checksum" in n or "wrong content" in n or "not a valid" in n or "truncated" in n
                  for n in notes)
    raise (DatasetCorruptError if corrupt else DatasetNotFoundError)("\n".join(msg))


def _download(fs, url, kind, n_features, notes, attempt):
    import pooch

    target = cache_dir() / fs.upstream
    target.parent.mkdir(parents=True, exist_ok=True)
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=60)
    for round_ in (1, 2):
        try:
            path = pooch.retrieve(url, known_hash=fs.upstream_hash, fname=target.name,
                                  path=target.parent, downloader=downloader)
        except Exception as exc:  # network errors, HTTP errors, hash mismatch (pooch ValueError)
            notes.append(f"download {url} failed: {type(exc).__name__}: {exc}")
            return None
        res = attempt("download", Path(path), None)
        if res is not None and not isinstance(res, str):
            return res, "download", Path(path)
        notes.append(res or f"download {url}: file vanished")
        warnings.warn(f"svmlab.datasets: {res}; deleting it"
                      + (" and downloading once more" if round_ == 1 else ""),
                      RuntimeWarning, stacklevel=4)
        Path(path).unlink(missing_ok=True)
    return None
