"""Choice of the compute device for the library's torch code.

The workflow's config has ``device: auto|cpu|cuda``; GPU-tagged rules pass it
on to the library, which calls :func:`resolve_device` once and runs its torch
computations there.
"""

from __future__ import annotations

import os

import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda")


def resolve_device(name: str = "auto") -> torch.device:
    """Turn a config value into a :class:`torch.device`.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}
        ``"auto"`` picks CUDA when torch sees a GPU (on a SLURM GPU node,
        the one in ``CUDA_VISIBLE_DEVICES``) and the CPU otherwise.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`DEVICE_CHOICES`, or is ``"cuda"``
        while torch sees no GPU (the message gives ``CUDA_VISIBLE_DEVICES``).

    Source: torch.cuda (library).
    """
    if name not in DEVICE_CHOICES:
        raise ValueError(f"device: expected one of {DEVICE_CHOICES}, got {name!r}")
    if name == "cpu":
        return torch.device("cpu")
    available = torch.cuda.is_available()
    if name == "cuda" and not available:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
        raise ValueError(
            "device: 'cuda' was requested but torch sees no GPU "
            f"(CUDA_VISIBLE_DEVICES={visible}, torch {torch.__version__}); "
            "use device: auto to fall back to the CPU"
        )
    return torch.device("cuda" if available else "cpu")


def describe_device(device: torch.device) -> str:
    """One line for a rule's log: the device, the GPU's name, and the
    ``CUDA_VISIBLE_DEVICES`` that SLURM set for the job (``<unset>`` if none).

    Parameters
    ----------
    device : torch.device

    Returns
    -------
    str
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return f"device={device} name={name} CUDA_VISIBLE_DEVICES={visible}"


def log_device(name: str, log) -> str:
    """Resolve a rule's ``device`` setting once, log where the job computes
    (:func:`describe_device`), and return the device as a string for the
    library's ``device=`` arguments.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}
    log : logging.Logger

    Returns
    -------
    str, e.g. ``"cpu"`` or ``"cuda"``

    Raises
    ------
    ValueError
        As :func:`resolve_device`.
    """
    device = resolve_device(name)
    log.info(describe_device(device))
    return str(device)
