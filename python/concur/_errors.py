"""The exceptions of concur. Every error the library raises is a :class:`ConcurError`;
bad input and bad options are also :class:`ValueError`, so code that catches ``ValueError``
keeps working."""

from __future__ import annotations

__all__ = ["ConcurError", "InputError", "SpecError", "ResourceError", "DeviceError"]


class ConcurError(Exception):
    """The base of every concur error (alone: an internal error, or a search that gave up)."""


class InputError(ConcurError, ValueError):
    """A puzzle, solution, board or array that does not read or does not hold, with the
    one-line reason the command line gives (wrong piece count, colour out of range, a piece
    no cell can hold, binary data, an array of the wrong shape...)."""


class SpecError(ConcurError, ValueError):
    """An option that no method has, that the method does not use, that is out of range or
    that contradicts another, with the command line's one-line reason (for example
    ``--layout is an option of --method dc, not of rrr``). :attr:`key` names the option
    (the keyword, ``join_weights``), or is None."""

    key: str | None = None


class ResourceError(ConcurError):
    """What the machine does not have: memory for the batch or its tables, an output that
    cannot be written, threads that cannot start."""


class DeviceError(ConcurError):
    """The GPU: no adapter, no adapter of the name asked for, a device error."""
