"""A one-line progress bar on stderr: `[#######-------]  12/200  alice`."""

from __future__ import annotations

import shutil
import sys

__all__ = ["ProgressBar"]


class ProgressBar:
    """Redraws one line as students finish; draws nothing when not enabled."""

    def __init__(self, total: int, enabled: bool, stream=None, width: int = 30):
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width

    def advance(self, label: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = self.width * self.done // max(1, self.total)
        line = (f"[{'#' * filled}{'-' * (self.width - filled)}] "
                f"{self.done:>{len(str(self.total))}}/{self.total}  {label}")
        columns = shutil.get_terminal_size((80, 24)).columns
        self.stream.write("\r" + line[:max(10, columns - 1)].ljust(max(10, columns - 1)))
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\n")
            self.stream.flush()
