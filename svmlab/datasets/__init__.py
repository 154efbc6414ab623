"""svmlab.datasets: the seed papers' benchmark data, fetched and checked.

``load(name, split="train") -> (X, y)``

* LIBSVM sets (a9a, w8a, ijcnn1, covtype, banana, ratsch-splice, diabetes,
  splice): ``X`` is CSR float64 with int32 ``indices``/``indptr`` (canonical:
  sorted, no duplicates; LinearSVC refuses int64 indices), ``y`` float64 in
  {-1, +1}.  ``n_features`` is always the dataset's (a9a.t never uses feature
  123 but still has 123 columns).
* Image sets (mnist, fashion-mnist): dense float64 ``X`` (n, 784) scaled to
  [0, 1], ``y`` int64 digits 0-9; :func:`one_vs_rest` makes a binary task
  (Platt's "class 8": ``one_vs_rest(y, 8)``).
* rcv1-ccat: CSR (via scikit-learn's fetch_rcv1), y in {-1, +1}.

Where a file comes from, in this order (see :mod:`svmlab.datasets._fetch`):

1. ``$SVMLAB_DATA`` (the shared directory; MANIFEST.md names and sha256),
2. the copy embedded in the package (a9a train and test): a9a never needs
   the network or the cache,
3. the user cache ``$SVMLAB_CACHE`` or ``pooch.os_cache("svmlab")``,
4. a pooch download over https from the original public location (LIBSVM
   datasets page; MNIST and Fashion-MNIST from the https hosts named in the
   registry) into that cache, unless ``download=False`` or
   ``SVMLAB_OFFLINE=1``; ``SVMLAB_DOWNLOAD_URL`` (or ``base_url=``) replaces
   the original locations by a mirror with the cache's layout.

Files are untrusted input.  Every copy is decompressed within a cap
(``max_bytes``, the registry's per-file value unless given), parsed with
every error a :class:`DatasetCorruptError` naming the file and the line or
offset, vouched for by one of the file's SHA-256 checksums (registry), and
checked against the registry's row and label counts.  A copy that fails
is reported with a warning and the next source is tried (a cache file is
moved aside to ``<name>.corrupt`` first); if nothing is left a
:class:`DatasetCorruptError` / :class:`DatasetNotFoundError` names the
dataset, file, URL and the directories to put the file in.

Parsed files are kept in memory (small LRU); every call returns fresh arrays,
so changing them cannot corrupt later loads.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _fetch
from ._fetch import cache_dir, clear_memory_cache, data_dir
from ._parse import DatasetCorruptError, DatasetNotFoundError
from ._registry import REGISTRY, DatasetSpec, FileSpec, describe_text
from ._synthetic import gauss_m, sparse_text, toy_2d, twonorm, waveform, waveform_bases

__all__ = ["load", "locate", "describe", "list_datasets", "get_spec", "one_vs_rest", "gauss_m", "toy_2d",
           "sparse_text", "twonorm", "waveform", "waveform_bases", "DatasetNotFoundError", "DatasetCorruptError", "REGISTRY",
           "DatasetSpec", "FileSpec", "data_dir", "cache_dir", "clear_memory_cache"]

# deterministic splits of the pools that come without their original split files
# (ours, documented in the registry): dataset -> (n_train, n_test, seed)
_OUR_SPLITS = {"banana": (400, 4900, 0), "ratsch-splice": (1000, 2175, 0),
               "covtype": (522911, 58101, 0)}

_ALIASES = {"adult": "a9a", "web": "w8a", "fashion_mnist": "fashion-mnist",
            "fashionmnist": "fashion-mnist", "rcv1": "rcv1-ccat", "covertype": "covtype",
            "gauss-m": "gauss-m", "gauss_m": "gauss-m"}


def list_datasets():
    """Names accepted by :func:`load` (plus ``"gauss-m"``, generated)."""
    return sorted(REGISTRY) + ["gauss-m"]


def get_spec(name) -> DatasetSpec:
    key = _ALIASES.get(str(name).lower(), str(name).lower())
    if key not in REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(list_datasets())}")
    return REGISTRY[key]


def describe(name) -> str:
    """Description, splits, source page and citation of a dataset."""
    if _ALIASES.get(str(name).lower(), name) == "gauss-m":
        return gauss_m.__doc__
    return describe_text(get_spec(name))


def one_vs_rest(y, positive):
    """Binary labels float64 in {-1, +1}: +1 where ``y == positive``."""
    y = np.asarray(y)
    if not np.any(y == positive):
        raise ValueError(f"class {positive!r} does not occur in y")
    return np.where(y == positive, 1.0, -1.0)


def _copy_xy(X, y):
    if sp.issparse(X):
        X = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr.copy()), shape=X.shape)
    else:
        X = np.array(X)
    return X, np.array(y)


def _rows(X, y, idx):
    idx = np.sort(idx)
    Xs = X[idx]
    Xs = sp.csr_matrix(Xs) if sp.issparse(Xs) else Xs
    if sp.issparse(Xs):
        Xs.indices = Xs.indices.astype(np.int32, copy=False)
        Xs.indptr = Xs.indptr.astype(np.int32, copy=False)
    return Xs, np.array(y[idx])


def load(name, split="train", *, download=None, base_url=None, max_bytes=None):
    """Load dataset ``name``'s ``split`` as ``(X, y)``.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (``"gauss-m"`` generates 4000 points).
    split : {"train", "test", "all"}
        Which part; datasets without an official split document ours.
    download : bool or None
        Allow a download into the user cache (default: yes unless the
        environment variable ``SVMLAB_OFFLINE`` is set).
    base_url : str or None
        Mirror replacing the original URLs (same layout as the cache).
    max_bytes : int or None
        Cap on the decompressed bytes read from one file (a damaged file or
        a decompression bomb is refused once past it).  None: the
        registry's cap for each file, about twice its canonical size plus
        1 MiB (``svmlab.datasets.get_spec(name).files``).
    """
    if _ALIASES.get(str(name).lower(), name) == "gauss-m":
        return gauss_m(4000, random_state={"train": 0, "test": 1, "all": 0}[split])
    spec = get_spec(name)
    if split not in spec.splits:
        msg = f"dataset {spec.name!r} has no split {split!r}; available: {', '.join(spec.splits)}"
        if spec.name == "splice" and split == "test":
            msg += (" (LIBSVM publishes only an unscaled splice.t; use 'ratsch-splice' "
                    "for a train/test split)")
        raise ValueError(msg)
    if spec.kind == "sklearn-rcv1":
        return _load_rcv1(spec, split, download)
    part = split if split in spec.files else "all"
    try:
        parsed = [p for p, _, _ in _resolve(spec, part, download, base_url, max_bytes)]
    except DatasetNotFoundError as exc:
        if spec.name == "mnist" and split == "train":
            raise DatasetNotFoundError(
                f"{exc}\n  note: the shared benchmark directory has only MNIST's 10000 test "
                "images (and both label files); the 60000 training images must be downloaded "
                "(needs network) or copied there. 'fashion-mnist' has 60000 training images "
                "and is svmlab's full-scale stand-in.") from None
        raise
    if spec.kind == "libsvm":
        X, y = parsed[0]
    else:
        images, labels = parsed
        X = images.reshape(images.shape[0], -1).astype(np.float64) / 255.0
        y = labels.astype(np.int64)
    if spec.name == "covtype":
        y = np.where(y == 1, 1.0, -1.0)
    if part == split:
        return _copy_xy(X, y)
    if split == "all" or spec.name not in _OUR_SPLITS:
        return _copy_xy(X, y)
    n_tr, n_te, seed = _OUR_SPLITS[spec.name]
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    assert n_tr + n_te == X.shape[0]
    return _rows(X, y, perm[:n_tr] if split == "train" else perm[n_tr:])


def _resolve(spec, part, download, base_url, max_bytes=None):
    if max_bytes is not None and (isinstance(max_bytes, bool) or int(max_bytes) != max_bytes
                                  or max_bytes < 0):
        raise ValueError(f"max_bytes must be None or a non-negative integer, got {max_bytes!r}")
    return [_fetch.fetch(spec.name, fs, "libsvm" if spec.kind == "libsvm" else "idx",
                         spec.n_features, download=download, base_url=base_url,
                         max_bytes=max_bytes)
            for fs in spec.files[part]]


def locate(name, split="train", *, download=None, base_url=None, max_bytes=None):
    """Where ``load(name, split)`` gets its file(s): a list of ``(source, path)``,
    source being "SVMLAB_DATA", "embedded", "cache" or "download"."""
    spec = get_spec(name)
    if spec.kind == "sklearn-rcv1":
        raise ValueError("rcv1-ccat is managed by scikit-learn's fetch_rcv1")
    if split not in spec.splits:
        raise ValueError(f"dataset {spec.name!r} has no split {split!r}")
    part = split if split in spec.files else "all"
    return [(src, path) for _, src, path in _resolve(spec, part, download, base_url, max_bytes)]


def _load_rcv1(spec, split, download):
    """RCV1-v2 CCAT vs rest through scikit-learn's fetch_rcv1 (sha256-checked by sklearn)."""
    from sklearn.datasets import fetch_rcv1

    home = cache_dir() / "sklearn"
    d = data_dir()
    if d is not None and (d / "sklearn" / "RCV1").is_dir():
        home = d / "sklearn"
    allow = _fetch.download_allowed(download)
    # Joachims trains on LYRL2004's large part (sklearn's "test") and tests on its "train"
    subset = {"train": "test", "test": "train"}[split]
    try:
        bunch = fetch_rcv1(data_home=str(home), subset=subset, download_if_missing=allow)
    except (OSError, Exception) as exc:  # offline, missing, or a failed sha256 check
        raise DatasetNotFoundError(
            f"dataset 'rcv1-ccat': cannot obtain RCV1-v2 (scikit-learn fetch_rcv1 files "
            f"lyrl2004_vectors_*.dat.gz, rcv1v2.topics.qrels.gz) in {home}: "
            f"{type(exc).__name__}: {exc}. Original URL: {spec.page}. Run once online "
            f"(or copy scikit-learn's RCV1 folder to {home / 'RCV1'}).") from exc
    col = list(bunch.target_names).index("CCAT")
    y = np.where(bunch.target[:, col].toarray().ravel() > 0, 1.0, -1.0)
    from ._parse import canonical_csr

    return canonical_csr(bunch.data), y
