"""Model files: a directory of ``.npz`` array files and a JSON manifest.

:func:`save_model` writes ``<group>.npz`` per group of arrays (numbers, or
fixed-width unicode for names; ``numpy.savez``, never a pickle) and
``manifest.json``: the format, the model ``kind``, the biokernels version,
the caller's ``meta`` (feature order, config hash, training data identity)
and the sha256 of every array file. The directory appears whole or not at
all (written beside it, then renamed). :func:`load_model` refuses, with one
:class:`~biokernels.errors.InputError` naming the file, a missing or
unparsable manifest, another kind or biokernels version, a missing, extra,
truncated or edited array file, and any object array (``allow_pickle=False``:
loading never runs code from the files).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from biokernels.errors import InputError

__all__ = ["FORMAT", "save_model", "load_model", "config_hash", "file_sha256"]

FORMAT = "biokernels-model/1"
MANIFEST = "manifest.json"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("biokernels")
    except PackageNotFoundError:
        return "unknown"


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def config_hash(section: Mapping) -> str:
    """sha256 of a config section as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()


def save_model(directory: str | Path, kind: str, arrays: Mapping[str, Mapping[str, np.ndarray]],
               meta: Mapping) -> Path:
    """Write a model directory; an existing one is replaced.

    Parameters
    ----------
    directory : the model directory to create
    kind : the model's kind (e.g. ``"pimkl_signature"``), checked on load
    arrays : group name -> {array name -> array}; each group is one
        ``<group>.npz``. Arrays must be numeric, bool or unicode.
    meta : JSON-serialisable description (feature order, config hash, ...)

    Returns
    -------
    Path of the directory

    Raises
    ------
    ValueError
        An object array (it would need a pickle) or a bad group name.
    """
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        files = {}
        for group, named in arrays.items():
            if not group.isidentifier():
                raise ValueError(f"save_model: group name {group!r} is not an identifier")
            named = {k: np.asarray(v) for k, v in named.items()}
            bad = [k for k, v in named.items() if v.dtype.hasobject]
            if bad:
                raise ValueError(f"save_model: arrays {bad} of group {group!r} hold Python objects; "
                                 "store numbers or fixed-width strings")
            path = tmp / f"{group}.npz"
            np.savez(path, **named)
            files[path.name] = file_sha256(path)
        manifest = {"format": FORMAT, "kind": kind, "biokernels_version": _version(), "meta": dict(meta),
                    "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n")
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def load_model(directory: str | Path, kind: str) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Read and check a model directory written by :func:`save_model`.

    Returns
    -------
    arrays : group -> {name -> ndarray}
    manifest : dict (``meta`` holds the caller's description)

    Raises
    ------
    InputError
        Each refusal listed in the module docstring, naming the file.
    """
    directory = Path(directory)
    mpath = directory / MANIFEST
    if not mpath.is_file():
        raise InputError(f"{directory}: not a model directory (no {MANIFEST})")
    try:
        manifest = json.loads(mpath.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{mpath}: not valid JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{mpath}: format {manifest.get('format') if isinstance(manifest, dict) else None!r}, "
                         f"expected {FORMAT!r}")
    if manifest.get("kind") != kind:
        raise InputError(f"{mpath}: a {manifest.get('kind')!r} model, expected {kind!r}")
    if manifest.get("biokernels_version") != _version():
        raise InputError(f"{mpath}: written by biokernels {manifest.get('biokernels_version')}, this is "
                         f"{_version()}; refit the model with this version")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise InputError(f"{mpath}: no array files listed")
    present = {p.name for p in directory.glob("*.npz")}
    extra = sorted(present - set(files))
    if extra:
        raise InputError(f"{directory}: array files {extra} are not in {MANIFEST}")
    arrays = {}
    for name, digest in files.items():
        path = directory / name
        if not path.is_file():
            raise InputError(f"{path}: listed in {MANIFEST} but missing")
        got = file_sha256(path)
        if got != digest:
            raise InputError(f"{path}: sha256 {got[:12]}… differs from the manifest's {str(digest)[:12]}… "
                             "(the file was truncated or edited)")
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays[name[: -len(".npz")]] = {k: z[k] for k in z.files}
        except (ValueError, OSError) as err:
            raise InputError(f"{path}: not a readable array file ({err})") from None
    return arrays, manifest
