"""The dataset registry: names, files, hashes, original URLs, descriptions, citations.

Every file carries the SHA-256 checksums that can be known for it, and
:mod:`svmlab.datasets._fetch` accepts a copy only if one of them holds
(provenance and the reasoning per file: ``docs/decisions/2402-dataset-hashes.md``):

``stored_sha256``
    the file as stored in the shared benchmark directory (``$SVMLAB_DATA``,
    listed in its ``MANIFEST.md``) and, for a9a, embedded in the package.
    Those copies are often re-compressed (LIBSVM text stored as ``.xz``,
    Debian's re-gzipped Fashion-MNIST), so this never matches a download.
``upstream_sha256``
    the file at ``url``, byte for byte; a download is checked against it
    (by pooch, before it is used).  Known for a9a (the shared copy is the
    LIBSVM file, byte-identical per MANIFEST.md) and for MNIST and
    Fashion-MNIST (published values, agreeing across independent sources).
``upstream_md5``
    the MD5 the dataset's authors publish (MNIST, Fashion-MNIST), checked as
    well; never on its own.
``content_sha256``
    the content, independent of compression and text form:
    :func:`~svmlab.datasets._parse.libsvm_content_sha256` (LIBSVM text:
    labels and rows as float64/int32 values, row order ignored) or the
    uncompressed bytes (IDX).  Computed from the shared copies, it checks a
    LIBSVM download whose own bytes no offline copy could hash (w8a,
    ijcnn1, diabetes, splice...) and any re-compressed copy.

A file with none of them (covtype: no copy was available to hash) is
checked by its parsed content only (row count, classes), with a warning
that says so.  ``max_bytes`` is the per-file cap on decompressed bytes
(about twice the canonical size plus 1 MiB), so a damaged file or a
decompression bomb is refused after reading that much.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
LIBSVM_MULTICLASS = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"
#: the MNIST files over https: PyTorch's mirror (torchvision downloads from it
#: first, with the same MD5s as the files of LeCun's page, which is http only)
MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
MNIST_PAGE = "http://yann.lecun.com/exdb/mnist/"
#: the Fashion-MNIST files over https, in the dataset's own repository (the
#: files whose MD5s its README publishes; the S3 website host is http only)
FASHION_URL = "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"

LIBSVM_CITATION = ("C.-C. Chang and C.-J. Lin. LIBSVM: a library for support vector machines. "
                   "ACM TIST 2(3):27, 2011. Data: "
                   "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/")


def _cap(size):
    """The decompressed-bytes cap of a file whose canonical content has
    ``size`` bytes: twice that plus 1 MiB (room for another text form)."""
    return 2 * int(size) + (1 << 20)


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset and everywhere it can come from.

    ``stored``: relative path in ``$SVMLAB_DATA`` (MANIFEST.md name), or None.
    ``upstream``: relative path in the user cache / a mirror (the original file name).
    ``url``: the original public location of ``upstream`` (https).
    ``embedded``: file name in ``svmlab/data`` (same bytes as ``stored``), or None.
    ``stored_sha256``, ``upstream_sha256``, ``upstream_md5``,
    ``content_sha256``: see the module docstring.
    ``max_bytes``: the cap on decompressed bytes (None: the parsers' default).
    ``n_samples`` / ``label_counts`` / ``shape_tail``: expected parse result.
    """

    stored: str | None
    stored_sha256: str | None
    upstream: str
    url: str | None
    upstream_sha256: str | None = None
    upstream_md5: str | None = None
    content_sha256: str | None = None
    max_bytes: int | None = None
    embedded: str | None = None
    n_samples: int | None = None
    label_counts: dict | None = None
    shape_tail: tuple | None = None  # IDX images: (28, 28)

    @property
    def hashes(self):
        """The checksums that apply to this file (any one of them may vouch
        for a copy; none known: content checks only)."""
        return [h for h in (self.stored_sha256, self.upstream_sha256, self.content_sha256)
                if h is not None]


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    kind: str  # "libsvm", "idx", "sklearn-rcv1"
    n_features: int
    description: str
    citation: str
    page: str
    files: dict = field(default_factory=dict)  # split -> tuple of FileSpec (idx: images, labels)
    splits: tuple = ("train", "test")
    licence: str = ""
    notes: str = ""

    def __str__(self):
        return describe_text(self)


def describe_text(spec: DatasetSpec) -> str:
    lines = [f"{spec.name}: {spec.title}", "", spec.description.strip(), "",
             f"Splits: {', '.join(spec.splits)}; features: {spec.n_features}",
             f"Source page: {spec.page}", f"Cite: {spec.citation}"]
    if spec.licence:
        lines.append(f"Licence: {spec.licence}")
    if spec.notes:
        lines += ["", spec.notes.strip()]
    return "\n".join(lines)


def _svm(stored, sha, upstream, content, size, base=LIBSVM_BINARY, **kw):
    return FileSpec(stored=stored, stored_sha256=sha, upstream=upstream,
                    url=base + upstream, content_sha256=content, max_bytes=_cap(size), **kw)


_MNIST_TEST_COUNTS = {0: 980, 1: 1135, 2: 1032, 3: 1010, 4: 982, 5: 892, 6: 958, 7: 1028,
                      8: 974, 9: 1009}
_MNIST_TRAIN_COUNTS = {0: 5923, 1: 6742, 2: 5958, 3: 6131, 4: 5842, 5: 5421, 6: 5918, 7: 6265,
                       8: 5851, 9: 5949}


def _idx(sub, base, fname, stored_sha, sha256, md5, content, size, n, counts=None, tail=None):
    return FileSpec(stored=f"{sub}/{fname}" if stored_sha else None, stored_sha256=stored_sha,
                    upstream=f"{sub}/{fname}", url=base + fname, upstream_sha256=sha256,
                    upstream_md5=md5, content_sha256=content, max_bytes=_cap(size),
                    n_samples=n, label_counts=counts, shape_tail=tail)


REGISTRY: dict[str, DatasetSpec] = {}


def _add(spec):
    REGISTRY[spec.name] = spec


_add(DatasetSpec(
    name="a9a", title="Adult (UCI census income), Platt's 123 binary features", kind="libsvm",
    n_features=123,
    description="""
Predict whether income exceeds $50K/yr from census data. Platt's 1998 encoding
into 123 sparse binary features (~14 non-zeros per row); labels -1/+1.
Platt's 'Adult' benchmark (AdultLin, AdultGauss) and the a9a set on the LIBSVM
page. Train 32561 rows (7841 positive), test 16281 rows. The test file never
uses feature 123; svmlab always loads with n_features=123. Embedded in the
package as the offline default.""",
    citation=("J. Platt. Fast training of support vector machines using sequential minimal "
              "optimization. In Advances in Kernel Methods, MIT Press, 1998. Data: R. Kohavi, "
              "B. Becker, UCI Adult (1996); " + LIBSVM_CITATION),
    page=LIBSVM_BINARY.rstrip("/") + ".html#a9a",
    licence="UCI Adult: CC BY 4.0 (UCI repository).",
    files={
        "train": (_svm("a9a.xz", "cea7c541c650d123ac692cb8e2244d1c2e82f67c75cbfeccdb25a4b6fc88ef72",
                       "a9a", "48f5b1d20a58eed05e765228c878fa3cdaf9613d8f0404a43e510c9c8bdcb0f0",
                       2329875, embedded="a9a.xz", n_samples=32561,
                       label_counts={-1: 24720, 1: 7841},
                       upstream_sha256="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),),
        "test": (_svm("a9a.t.xz", "11dcdf09d2c3502c1e972986b8d8022b5adf895311e41e37e06e26ebc1ef45f3",
                      "a9a.t", "519f1ce28da17e2693d9cd150006a4869a86898394f6973c33833c97af41a3cc",
                      1164628, embedded="a9a.t.xz", n_samples=16281,
                      label_counts={-1: 12435, 1: 3846}),),
    }))

_add(DatasetSpec(
    name="w8a", title="Web (Platt's web page categorisation set)", kind="libsvm", n_features=300,
    description="""
Platt's 'Web' benchmark: 300 sparse binary keyword features of web pages
(~12 non-zeros per row), a rare positive class (3%). LIBSVM w8a: train 49749
rows (1479 positive), test 14951 rows (454 positive).""",
    citation="J. Platt, 1998 (see a9a). " + LIBSVM_CITATION,
    page=LIBSVM_BINARY.rstrip("/") + ".html#w8a",
    files={
        "train": (_svm("w8a.xz", "2394c71a5273b93d8e1d189beb106039beb7e28f82c5f11805ed1966335be58c",
                       "w8a", "593c4cd08e0cdbbc7ca959fe97ff6e6a23d1e276c066bb3830cc05fddc699f32",
                       3478238, n_samples=49749, label_counts={-1: 48270, 1: 1479}),),
        "test": (_svm("w8a.t.xz", "3f952104f0bd2fd2289ac62f32b8aece73eefa9b5c62b6fc651e21448291fb9d",
                      "w8a.t", "afbce6579ca604f4b49b967a7828e0b08dc79d4f9cbb7b6bf70ea44856407764",
                      1045870, n_samples=14951, label_counts={-1: 14497, 1: 454}),),
    }))

_add(DatasetSpec(
    name="ijcnn1", title="IJCNN 2001 neural network competition", kind="libsvm", n_features=22,
    description="""
IJCNN 2001 challenge data with the winner's (Chang and Lin) transformation:
22 dense-ish features. Train = LIBSVM ijcnn1 (tr + val, 49990 rows, 4853
positive), test = ijcnn1.t (91701 rows).""",
    citation=("D. Prokhorov. IJCNN 2001 neural network competition. Slide presentation in "
              "IJCNN'01, 2001; C.-C. Chang and C.-J. Lin. IJCNN 2001 challenge: generalization "
              "ability and text decoding. IJCNN 2001. " + LIBSVM_CITATION),
    page=LIBSVM_BINARY.rstrip("/") + ".html#ijcnn1",
    files={
        "train": (_svm("ijcnn1.bz2", "b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3",
                       "ijcnn1.bz2", "8c39941baa0476e7d253cb0636abbfa07d54b51a61e2cf2fbbd8d117688ba2c9",
                       7844877, n_samples=49990, label_counts={-1: 45137, 1: 4853}),),
        "test": (_svm("ijcnn1.t.bz2", "acd1db430684fdd3f0c768ecc49aa8e749d0004fc117611220c2aa576a7b6a24",
                      "ijcnn1.t.bz2", "da16c5b59c9c983faa26a2d47a43720b5aebac2f95afefdade0574b60e6b311b",
                      14213968, n_samples=91701, label_counts={-1: 82989, 1: 8712}),),
    }))

_add(DatasetSpec(
    name="mnist", title="MNIST handwritten digits (IDX)", kind="idx", n_features=784,
    description="""
70000 28x28 grey-level digit images (60000 train, 10000 test) as dense float64
rows of 784 pixels scaled to [0, 1]; y holds the digits 0-9 (use
``one_vs_rest(y, 8)`` for Platt's class-8 task). In the shared benchmark
directory only the 10000 TEST images (and both label files) are available;
the training images must be downloaded or placed by hand.""",
    citation=("Y. LeCun, L. Bottou, Y. Bengio, P. Haffner. Gradient-based learning applied to "
              "document recognition. Proc. IEEE 86(11), 1998. http://yann.lecun.com/exdb/mnist/"),
    page=MNIST_PAGE,
    licence="CC BY-SA 3.0 (as stated by the MNIST maintainers' mirrors).",
    notes=("Downloads come over https from PyTorch's mirror (" + MNIST_URL + "), the same .gz "
           "files as LeCun's http-only page, checked by their published SHA-256 and MD5. The "
           "shared copies are re-gzipped (same IDX payload, other gzip header): checked by "
           "their MANIFEST sha256 or the SHA-256 of the uncompressed IDX bytes."),
    files={
        "train": (_idx("mnist", MNIST_URL, "train-images-idx3-ubyte.gz", None,
                       "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                       "f68b3c2dcbeaaa9fbdd348bbdeb94873", None, 47040016, 60000, tail=(28, 28)),
                  _idx("mnist", MNIST_URL, "train-labels-idx1-ubyte.gz",
                       "ec02e7948609e5754d47881c09b8afdd8dfa60600b9e5388c8c54a67069ec772",
                       "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                       "d53e105ee54ea40749a09fcbcd1e9432",
                       "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", 60008,
                       60000, _MNIST_TRAIN_COUNTS)),
        "test": (_idx("mnist", MNIST_URL, "t10k-images-idx3-ubyte.gz",
                      "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b",
                      "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                      "9fb629c4189551a2d022fa330f9573f3",
                      "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", 7840016,
                      10000, tail=(28, 28)),
                 _idx("mnist", MNIST_URL, "t10k-labels-idx1-ubyte.gz",
                      "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c",
                      "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                      "ec29112dd5afa0611ce80d1b7f02629c",
                      "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", 10008,
                      10000, _MNIST_TEST_COUNTS)),
    }))

_add(DatasetSpec(
    name="fashion-mnist", title="Fashion-MNIST (Zalando), MNIST-format clothing images",
    kind="idx", n_features=784,
    description="""
70000 28x28 grey-level images of 10 clothing classes (6000 per class in the
60000-image training set, 1000 per class in the test set), dense float64 rows
scaled to [0, 1], y = class 0-9. svmlab uses the 60000 training images as the
full-scale stand-in for Platt's 60000-image MNIST experiment.""",
    citation=("H. Xiao, K. Rasul, R. Vollgraf. Fashion-MNIST: a novel image dataset for "
              "benchmarking machine learning algorithms. arXiv:1708.07747, 2017."),
    page="https://github.com/zalandoresearch/fashion-mnist",
    licence="MIT (Zalando SE).",
    notes=("Downloads come over https from the dataset's repository (" + FASHION_URL + "), "
           "checked by SHA-256 and by the MD5s its README publishes. The shared copies come "
           "from the Debian package (re-gzipped), checked by their MANIFEST sha256 or the "
           "SHA-256 of the uncompressed IDX bytes."),
    files={
        "train": (_idx("fashion-mnist", FASHION_URL, "train-images-idx3-ubyte.gz",
                       "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
                       "08dc20ab1689590a0bcd66e874647b6ee8464e2d501b5a3f1f78831db19a3fdc",
                       "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
                       "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
                       47040016, 60000, tail=(28, 28)),
                  _idx("fashion-mnist", FASHION_URL, "train-labels-idx1-ubyte.gz",
                       "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
                       "b0197879cbda89f3dc7b894f9fd52b858e68ea4182b6947c9d8c2b67e5f18dcc",
                       "25c81989df183df01b3e8a0aad5dffbe",
                       "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
                       60008, 60000, {k: 6000 for k in range(10)})),
        "test": (_idx("fashion-mnist", FASHION_URL, "t10k-images-idx3-ubyte.gz",
                      "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
                      "78dcbbfb5a27efaf1b6c1d616caca68560be8766c5bffcb2791df9273a534229",
                      "bef4ecab320f06d8554ea6380940ec79",
                      "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
                      7840016, 10000, tail=(28, 28)),
                 _idx("fashion-mnist", FASHION_URL, "t10k-labels-idx1-ubyte.gz",
                      "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
                      "42bd18137a62d5998cdeae52bf3a0676ac6b706f5cf8439b47bb5b151ae3dccf",
                      "bb300cfdad3c16e7a12a480ee83cd310",
                      "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
                      10008, 10000, {k: 1000 for k in range(10)})),
    }))

_add(DatasetSpec(
    name="covtype", title="Forest covertype, class 1 (Spruce/Fir) vs rest", kind="libsvm",
    n_features=54,
    description="""
UCI forest cover type (581012 cells, 54 cartographic features), made binary
as in Joachims' SVMperf paper: cover type 1 -> +1, all others -> -1. Read
from the LIBSVM multiclass file covtype.bz2 (7 classes). There is no official
split: 'train'/'test' is OUR deterministic split of 522911 / 58101 rows (the
sizes Joachims used; seed 0); 'all' is the whole set. Not available in the
shared directory: download only.""",
    citation=("J. A. Blackard, D. J. Dean. Comparative accuracies of artificial neural networks "
              "and discriminant analysis in predicting forest cover types from cartographic "
              "variables. Computers and Electronics in Agriculture 24(3), 1999. UCI Covertype. "
              "T. Joachims. Training linear SVMs in linear time. KDD 2006. " + LIBSVM_CITATION),
    page=LIBSVM_MULTICLASS.rstrip("/") + ".html#covtype",
    licence="UCI Covertype: CC BY 4.0.",
    splits=("train", "test", "all"),
    files={"all": (FileSpec(stored=None, stored_sha256=None, upstream="covtype.bz2",
                            url=LIBSVM_MULTICLASS + "covtype.bz2", max_bytes=256 << 20,
                            n_samples=581012),)},
    notes=("No SHA-256 is known (no copy was available to hash): a download is checked by its "
           "parsed content only (581012 rows, 7 classes), with a warning that says so."),
))

_add(DatasetSpec(
    name="rcv1-ccat", title="Reuters RCV1-v2, topic CCAT vs rest", kind="sklearn-rcv1",
    n_features=47236,
    description="""
RCV1-v2 (Lewis et al. 2004) tf-idf document vectors, 47236 features, binary
task CCAT (corporate/industrial) vs rest as in Joachims' SVMperf paper, which
trains on the 781265-document LYRL2004 'test' part and tests on the 23149
'train' part; svmlab's 'train'/'test' follow Joachims. Downloaded through
scikit-learn's fetch_rcv1 (which checks sha256 of its files) into the svmlab
cache; not available in the shared directory.""",
    citation=("D. D. Lewis, Y. Yang, T. Rose, F. Li. RCV1: a new benchmark collection for text "
              "categorization research. JMLR 5, 2004. T. Joachims, KDD 2006."),
    page="http://www.ai.mit.edu/projects/jmlr/papers/volume5/lewis04a/lyrl2004_rcv1v2_README.htm",
    licence="Reuters corpus: research agreement with NIST/Reuters; vectors distributed by the authors.",
    files={},
))

_add(DatasetSpec(
    name="banana", title="Ratsch's banana benchmark (2-D)", kind="libsvm", n_features=2,
    description="""
The 5300 unique points of Ratsch's IDA 'banana' benchmark (2 features, labels
-1/+1). Ratsch's 100 fixed 400/4900 splits are not available, so 'train' /
'test' is OUR deterministic 400/4900 split (random permutation, seed 0) and
'all' is the whole pool. Used by the IRWLS paper (Perez-Cruz et al. 2000).""",
    citation=("G. Ratsch, T. Onoda, K.-R. Muller. Soft margins for AdaBoost. Machine Learning "
              "42(3), 2001. IDA benchmark repository."),
    page="https://github.com/tdiethe/gunnar_raetsch_benchmark_datasets",
    licence="Research benchmark distributed freely by G. Ratsch; no explicit licence.",
    splits=("train", "test", "all"),
    files={"all": (FileSpec(stored="ratsch_banana.xz",
                            stored_sha256="22854e19bffa066a60638ab3de063e168d2e329782293775a90ecfdcd8274517",
                            upstream="ratsch_banana.xz", url=None,
                            content_sha256="8f5b6e2b78363ef5645a9824ec22e92104010d8dd3e7e1f5ba3bbf6b56a27e7d",
                            max_bytes=_cap(154568), n_samples=5300,
                            label_counts={-1: 2924, 1: 2376}),)},
    notes="No original download in LIBSVM format exists (the store's copy was converted from .mat).",
))

_add(DatasetSpec(
    name="ratsch-splice", title="Ratsch's splice benchmark pool", kind="libsvm", n_features=60,
    description="""
The 3175 patterns of Ratsch's 'splice' benchmark (60 nucleotide codes 1-4).
Ratsch's 20 fixed 1000/2175 splits are not available, so 'train'/'test' is OUR
deterministic 1000/2175 split (seed 0); 'all' is the pool.""",
    citation="G. Ratsch et al. 2001 (see banana); Delve / UCI splice-junction data.",
    page="https://github.com/tdiethe/gunnar_raetsch_benchmark_datasets",
    licence="Research benchmark; no explicit licence.",
    splits=("train", "test", "all"),
    files={"all": (FileSpec(stored="ratsch_splice.xz",
                            stored_sha256="d3b1e2f62844909db7f44538ce9b26fb6ae031e3bc78aa0c6e389bd9c943c0c1",
                            upstream="ratsch_splice.xz", url=None,
                            content_sha256="7949b1eaa61838c365310969d50dae0f9741e37ce46a0e4ff1c5d14c3644e461",
                            max_bytes=_cap(933450), n_samples=3175,
                            label_counts={-1: 1648, 1: 1527}),)},
))

_add(DatasetSpec(
    name="diabetes", title="Pima Indians diabetes (LIBSVM, unscaled)", kind="libsvm",
    n_features=8,
    description="""
768 patients, 8 clinical features (unscaled), labels -1/+1 where -1 = tested
positive (LIBSVM's coding). No official split: 'train' and 'all' are the whole
set.""",
    citation=("J. W. Smith et al. Using the ADAP learning algorithm to forecast the onset of "
              "diabetes mellitus. Proc. Symp. Computer Applications in Medical Care, 1988. "
              + LIBSVM_CITATION),
    page=LIBSVM_BINARY.rstrip("/") + ".html#diabetes",
    splits=("train", "all"),
    files={"all": (_svm("diabetes.xz", "4981388e0d845fde747f6600628bb622ccb2f5ac039c8fc185ba5f321c6aaa5c",
                        "diabetes", "f1a945c78fdfcbd671b8afc443ba7ca9499d9881d444954be5cf491786eb821c",
                        75503, n_samples=768, label_counts={-1: 268, 1: 500}),)},
))

_add(DatasetSpec(
    name="splice", title="Splice-junction (LIBSVM splice_scale, training part)", kind="libsvm",
    n_features=60,
    description="""
LIBSVM splice training set (1000 rows, 60 features scaled to [-1, 1]).
LIBSVM publishes no scaled test set (splice.t is unscaled), so only 'train'
exists here; use 'ratsch-splice' for a train/test study.""",
    citation="Delve / UCI molecular biology (splice-junction). " + LIBSVM_CITATION,
    page=LIBSVM_BINARY.rstrip("/") + ".html#splice",
    splits=("train",),
    files={"train": (_svm("splice_scale.xz",
                          "0eee5d02721fe6851f13ace710d56d3b64db7a9f69730f90ad7e4c8e8f4326da",
                          "splice_scale",
                          "0b3975dc8b18f9359acff27d4dc17d585278c390eab1ba069b4c30653004e6e8",
                          541233, n_samples=1000, label_counts={-1: 483, 1: 517}),)},
))
